"""The Kubernetes ``format`` library: every named format with valid and invalid strings,
upstream's exact messages (apiserver's ``format_test.go`` where it has them), equality,
``format.named``, types, and the static and runtime costs of ``cost_test.go``."""

from __future__ import annotations

from typing import Any

import pytest

from dra_solver.cel import DeviceView, compile_expression
from dra_solver.cel.lib_format import FORMATS
from dra_solver.errors import CelCompileError, CelRuntimeError

D = "dev.example.com"


def dev(value: str) -> DeviceView:
    return DeviceView(D, "dev-0", {D: {"v": value}}, {})


def validate(fmt: str, value: str) -> tuple[str, ...] | None:
    """Run ``format.<fmt>().validate(v)`` on a device attribute (nothing folded); an optional
    comes back as its value or None."""
    out = compile_expression(f'format.{fmt}().validate(device.attributes["{D}"].v)').evaluate(dev(value))
    assert out is None or type(out) is tuple
    return out


DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
    "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
    "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
    "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
)
LABEL_KEY_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)

VALID = [
    ("dns1123Label", "my-label-name"),
    ("dns1123Label", "0"),
    ("dns1123Label", "a" * 63),
    ("dns1123Subdomain", "apiextensions.k8s.io"),
    ("dns1123Subdomain", "example.com"),
    ("dns1035Label", "my-label-name"),
    ("qualifiedName", "apiextensions.k8s.io/v1beta1"),
    ("qualifiedName", "my.name"),
    ("qualifiedName", "MyName_1"),
    ("dns1123LabelPrefix", "my-label-prefix-"),
    ("dns1123SubdomainPrefix", "mysubdomain.prefix.-"),
    ("dns1035LabelPrefix", "my-label-prefix-"),
    ("labelValue", "my-cool-label-Value"),
    ("labelValue", ""),
    ("uri", "http://example.com"),
    ("uri", "/just/a/path"),
    ("uri", "mailto:someone@example.com"),
    ("uri", "example.com:9000/metrics"),  # scheme "example.com", opaque "9000/metrics"
    ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
    ("uuid", "123E4567E89B12D3A456426614174000"),  # dashes optional, upper case allowed
    ("byte", "aGVsbG8="),
    ("byte", "aGVsbA=="),
    ("date", "2021-01-01"),
    ("date", "2024-02-29"),  # leap year
    ("date", "2000-02-29"),
    ("date", "0000-02-29"),  # Go's time.Parse: year 0 exists and is a leap year
    ("datetime", "2021-01-01T00:00:00Z"),
    ("datetime", "2021-01-01t23:59:59.123+05:30"),
    ("datetime", "2021-01-01T00:00:00ZTignored"),  # strfmt looks only between the first two t's
    ("datetime", "2021-01-01T00:00:00,5Z"),  # the fraction's separator is any character
]


@pytest.mark.parametrize(("fmt", "value"), VALID)
def test_valid_strings_validate_to_none(fmt: str, value: str) -> None:
    assert validate(fmt, value) is None


INVALID = [
    ("dns1123Label", "contains a space", [DNS1123_LABEL_MSG]),
    ("dns1123Label", "my.label", ["must not contain dots"]),
    ("dns1123Label", "a" * 64, ["must be no more than 63 characters"]),
    ("dns1123Label", "-" * 64, ["must be no more than 63 characters", DNS1123_LABEL_MSG]),
    ("dns1123Label", "", [DNS1123_LABEL_MSG]),
    ("dns1123Label", "ab\n", [DNS1123_LABEL_MSG]),  # Go's $ does not match before a newline
    ("dns1123Subdomain", "contains a space", [DNS1123_SUBDOMAIN_MSG]),
    ("dns1123Subdomain", "Example.com", [DNS1123_SUBDOMAIN_MSG]),
    ("dns1123Subdomain", "a." * 127, ["must be no more than 253 characters", DNS1123_SUBDOMAIN_MSG]),
    ("dns1035Label", "contains a space", [DNS1035_LABEL_MSG]),
    ("dns1035Label", "1abc", [DNS1035_LABEL_MSG]),
    ("qualifiedName", "contains a space", ["name part " + LABEL_KEY_MSG]),
    (
        "qualifiedName",
        "a/b/c",
        [
            "a valid label key " + LABEL_KEY_MSG + " with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ],
    ),
    ("qualifiedName", "/name", ["prefix part must be non-empty"]),
    ("qualifiedName", "example.com/", ["name part must be non-empty", "name part " + LABEL_KEY_MSG]),
    ("qualifiedName", "Example.com/name", ["prefix part " + DNS1123_SUBDOMAIN_MSG]),
    ("qualifiedName", "a" * 64, ["name part must be no more than 63 bytes"]),  # content package: bytes
    (
        "qualifiedName",
        "a" * 254 + "/x",
        ["prefix part must be no more than 253 bytes"],
    ),
    ("dns1123LabelPrefix", "contains a space-", [DNS1123_LABEL_MSG]),
    ("dns1123SubdomainPrefix", "contains a space-", [DNS1123_SUBDOMAIN_MSG]),
    ("dns1035LabelPrefix", "contains a space-", [DNS1035_LABEL_MSG]),
    ("dns1123LabelPrefix", "-", [DNS1123_LABEL_MSG]),  # one byte: nothing masked
    ("dns1123LabelPrefix", "a" * 64 + "-", ["must be no more than 63 characters"]),
    ("dns1123LabelPrefix", "é-", [DNS1123_LABEL_MSG]),  # two *bytes* cut: half of é stays
    ("labelValue", "my-cool-label-Value!!\n\n!!!", [LABEL_VALUE_MSG]),
    ("labelValue", "a" * 64, ["must be no more than 63 bytes"]),
    ("labelValue", "é" * 32, ["must be no more than 63 bytes", LABEL_VALUE_MSG]),  # 64 bytes
    ("uri", "", ['parse "": empty url']),
    ("uri", "x", ['parse "x": invalid URI for request']),
    ("uri", "1example.com:9000", ['parse "1example.com:9000": invalid URI for request']),
    ("uri", "http://[::1", ["parse \"http://[::1\": missing ']' in host"]),
    ("uri", "http://host:port/", ['parse "http://host:port/": invalid port ":port" after host']),
    ("uri", "http://a b/", ['parse "http://a b/": invalid character " " in host name']),
    ("uri", "/a\x01", ['parse "/a\\x01": net/url: invalid control character in URL']),
    ("uuid", "123e4567-e89b-12d3-a456-42661417400", ["does not match the UUID format"]),
    ("uuid", "g23e4567-e89b-12d3-a456-426614174000", ["does not match the UUID format"]),
    ("byte", "aGVsbG8", ["invalid base64"]),
    ("byte", "", ["invalid base64"]),
    ("byte", "aGVs bG8=", ["invalid base64"]),
    ("date", "2020-01-32", ["invalid date"]),
    ("date", "2023-02-29", ["invalid date"]),
    ("date", "1900-02-29", ["invalid date"]),
    ("date", "2021-1-01", ["invalid date"]),
    ("date", "2021-13-01", ["invalid date"]),
    ("date", "2021-01-01T00:00:00Z", ["invalid date"]),
    ("datetime", "2020-01-32T00:00:00Z", ["invalid datetime"]),
    ("datetime", "2021-01-01", ["invalid datetime"]),
    ("datetime", "2021-01-01T24:00:00Z", ["invalid datetime"]),
    ("datetime", "2021-01-01T00:60:00Z", ["invalid datetime"]),
    ("datetime", "2021-01-01T00:00:00", ["invalid datetime"]),  # no zone
    ("datetime", "2021-01-01T00:00:00+0100", ["invalid datetime"]),
]


@pytest.mark.parametrize(("fmt", "value", "errors"), INVALID)
def test_invalid_strings_return_upstream_messages(fmt: str, value: str, errors: list[str]) -> None:
    assert validate(fmt, value) == tuple(errors)


def test_every_upstream_name_is_available_both_ways() -> None:
    assert list(FORMATS) == [
        "dns1123Label",
        "dns1123Subdomain",
        "dns1035Label",
        "qualifiedName",
        "dns1123LabelPrefix",
        "dns1123SubdomainPrefix",
        "dns1035LabelPrefix",
        "labelValue",
        "uri",
        "uuid",
        "byte",
        "date",
        "datetime",
    ]
    for lhs in FORMATS:
        assert compile_expression(f'format.named("{lhs}").hasValue()').evaluate(dev("")) is True
        same = compile_expression(f'format.named("{lhs}").value() == format.{lhs}()')
        assert same.evaluate(dev("")) is True
        for rhs in FORMATS:
            if rhs != lhs:
                assert compile_expression(f"format.{lhs}() == format.{rhs}()").evaluate(dev("")) is False


@pytest.mark.parametrize(
    ("expression", "want"),
    [
        ('format.named("unknown").hasValue()', False),
        ('format.named("dns1123label").hasValue()', False),  # names are case-sensitive
        ('format.named(device.attributes["dev.example.com"].v).hasValue()', True),
        ("type(format.uuid()) == type(format.byte())", True),
        ('format.uuid().validate("x").orValue(["ok"])', ("does not match the UUID format",)),
        ('format.uuid().validate("x").value().join("\\n")', "does not match the UUID format"),
        ('!format.dns1123Label().validate(device.attributes["dev.example.com"].v).hasValue()', True),
        ('format.uuid().validate(device.attributes["dev.example.com"].v).hasValue()', True),
    ],
)
def test_expressions(expression: str, want: Any) -> None:
    assert compile_expression(expression).evaluate(dev("uuid")) == want


def test_types_and_compile_errors() -> None:
    assert compile_expression("format.uuid()").result_type == "kubernetes.NamedFormat"
    assert compile_expression('format.named("uuid")').result_type == "optional_type(kubernetes.NamedFormat)"
    assert compile_expression('format.uuid().validate("x")').result_type == "optional_type(list(string))"
    for bad in ("format.named(1)", "format.uuid().validate(1)", "format.nosuch()", '"x".validate("y")'):
        with pytest.raises(CelCompileError):
            compile_expression(bad)
    # a selector must be a bool: validate's optional is not
    with pytest.raises(CelCompileError, match="must evaluate to bool"):
        compile_expression('format.uuid().validate("x")', expect_bool=True)


def test_dyn_receiver_that_is_no_format_is_a_runtime_error() -> None:
    program = compile_expression('dyn(device.attributes["dev.example.com"].v).validate("x")')
    with pytest.raises(CelRuntimeError, match="no matching overload"):
        program.evaluate(dev("uuid"))


# -- cost ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expression", "estimate"),
    [
        # apiserver cost_test.go TestNameFormatCost: the estimate assumes a 128-byte regex
        ('format.named("dns1123subdomain")', 1),
        ('format.named("dns1123Subdomain").value().validate("my-name")', 34),
        ('format.named("dns1123Label").value().validate("my-name")', 34),
        # a device string (at most 64 characters): ceil(64 * 0.1) * 32
        ('format.uri().validate(device.attributes["dev.example.com"].v)', 1 + 4 + 7 * 32),
    ],
)
def test_estimated_cost(expression: str, estimate: int) -> None:
    assert compile_expression(expression).max_cost == estimate


def runtime_cost(expression: str, value: str) -> int:
    """The smallest cost limit under which the expression evaluates on the device."""
    for limit in range(1, 2000):
        program = compile_expression(expression, cost_limit=limit, estimate_cost=False)
        try:
            program.evaluate(dev(value))
        except CelRuntimeError:
            continue
        return limit
    raise AssertionError("too expensive")


def test_runtime_cost_uses_each_formats_regex_size() -> None:
    read = 'device.attributes["dev.example.com"].v'
    base = runtime_cost(f"size({read}) >= 0", "my-name") - 1  # reading the attribute
    # upstream: ceil((7 + 1) * 0.1) * ceil(size * 0.25) per validate call
    assert runtime_cost(f"format.dns1123Label().validate({read})", "my-name") == base + 8
    assert runtime_cost(f"format.dns1123Subdomain().validate({read})", "my-name") == base + 15
    assert runtime_cost(f"format.uri().validate({read})", "my-name") == base + 276  # 1103 bytes
    assert runtime_cost(f"format.uri().validate({read})", "x" * 20) == base + 3 * 276
