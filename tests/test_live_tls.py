"""TLS on the live read (issue #39 §3): the kubeconfig's CA and client certificate are what is
used; verification is off only when the kubeconfig says `insecure-skip-tls-verify`; no message
repeats a credential or a certificate.

The fake API server speaks HTTPS with a certificate of a CA made for the test (by the `openssl`
command: the tests skip without it) and takes a client certificate of that CA as credentials,
as the API server's x509 authenticator does.
"""

from __future__ import annotations

import base64
import os
import shutil
import ssl
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from dra_solver.api import live
from dra_solver.cli.main import app
from tests.fake_apiserver import TOKEN, FakeApiServer, dump_items, serving

runner = CliRunner()


@pytest.fixture(autouse=True)
def _client() -> None:
    if os.environ.get("CI"):
        import kubernetes  # noqa: F401 - in `[test]`: its absence fails under CI
    else:
        pytest.importorskip("kubernetes")


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def _ca(directory: Path, name: str) -> None:
    _openssl(
        *("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
        *("-keyout", f"{name}.key", "-out", f"{name}.crt", "-days", "2", "-subj", f"/CN={name}"),
        cwd=directory,
    )


def _signed(directory: Path, name: str, ca: str, extensions: str) -> None:
    _openssl(
        *("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"),
        *("-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}"),
        cwd=directory,
    )
    (directory / f"{name}.ext").write_text(extensions)
    _openssl(
        *("x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key"),
        *("-CAcreateserial", "-out", f"{name}.crt", "-days", "2", "-extfile", f"{name}.ext"),
        cwd=directory,
    )


@pytest.fixture(scope="module")
def pki(tmp_path_factory: Any) -> Path:
    """A CA, a server certificate for 127.0.0.1, a client certificate `planner`, all of that
    CA, and another CA that signed none of them."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make the test's certificates")
    directory: Path = tmp_path_factory.mktemp("pki")
    _ca(directory, "ca")
    _ca(directory, "other-ca")
    _signed(directory, "server", "ca", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    _signed(directory, "planner", "ca", "extendedKeyUsage=clientAuth\n")
    return directory


def _tls(pki: Path) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki / "server.crt", pki / "server.key")
    context.load_verify_locations(pki / "ca.crt")
    context.verify_mode = ssl.CERT_OPTIONAL  # a client certificate, when given, must be the CA's
    return context


def _data(path: Path) -> str:
    return base64.b64encode(path.read_bytes()).decode()


def _pems(pki: Path) -> list[str]:
    """What of the certificates and keys must never be in a message: each PEM body's lines, and
    the base64 of each file as a kubeconfig's `-data` field holds it."""
    out: list[str] = []
    for name in ("ca", "planner"):
        for suffix in ("crt", "key"):
            path = pki / f"{name}.{suffix}"
            out.append(_data(path))
            out.extend(line for line in path.read_text().splitlines() if line and "-----" not in line)
    return out


def _items() -> list[dict[str, Any]]:
    return dump_items()


def test_the_kubeconfigs_ca_and_client_certificate_are_used(tmp_path: Path, pki: Path) -> None:
    """As `-data` fields, and as files: the server is verified with the kubeconfig's CA, and the
    client certificate is the only credential (no token)."""
    data = (
        {"certificate-authority-data": _data(pki / "ca.crt")},
        {
            "client-certificate-data": _data(pki / "planner.crt"),
            "client-key-data": _data(pki / "planner.key"),
        },
    )
    files = (
        {"certificate-authority": str(pki / "ca.crt")},
        {"client-certificate": str(pki / "planner.crt"), "client-key": str(pki / "planner.key")},
    )
    for cluster, user in (data, files):
        with serving(FakeApiServer(_items()), tls=_tls(pki)) as fake:
            path = fake.kubeconfig(tmp_path, token=None, cluster=cluster, user=user)
            got = live.read(live.Target(kubeconfig=str(path)))
        assert got.server.startswith("https://") and got.counts["Pod"] == 10
        assert got.warnings == []
        assert fake.requests and all(r.client == "planner" and r.authorization == "" for r in fake.requests)


def test_verification_is_on_unless_the_kubeconfig_turns_it_off(tmp_path: Path, pki: Path) -> None:
    """No CA in the kubeconfig (the system's CAs do not know the test's), or another CA: the
    handshake fails, one line, nothing tried again; `insecure-skip-tls-verify: true` reads, with
    a warning that nothing proves who the server is."""
    for cluster in ({}, {"certificate-authority-data": _data(pki / "other-ca.crt")}):
        with serving(FakeApiServer(_items()), tls=_tls(pki)) as fake:
            path = fake.kubeconfig(tmp_path, cluster=cluster)
            with pytest.raises(live.LiveError) as exc:
                live.read(live.Target(kubeconfig=str(path)))
        message = str(exc.value)
        assert message.startswith(f"cannot reach the API server {fake.url} (context fake): ")
        assert "CERTIFICATE_VERIFY_FAILED" in message and "\n" not in message
        assert len(fake.requests) == 0  # refused at the handshake: no request was made
        assert TOKEN not in message and not any(p in message for p in _pems(pki))
    with serving(FakeApiServer(_items()), tls=_tls(pki)) as fake:
        path = fake.kubeconfig(tmp_path, cluster={"insecure-skip-tls-verify": True})
        got = live.read(live.Target(kubeconfig=str(path)))
        assert got.counts["Pod"] == 10
        assert got.warnings == [
            "context fake: TLS verification is off (the kubeconfig's insecure-skip-tls-verify): nothing "
            f"proves that {fake.url} is the cluster's API server"
        ]
        result = runner.invoke(app, ["validate", "--kubeconfig", str(path)])
    assert result.exit_code == 0
    assert result.stderr.splitlines() == [f"warning: {got.warnings[0]}"]  # not urllib3's, per request


def test_no_message_holds_a_credential_or_a_certificate(tmp_path: Path, pki: Path) -> None:
    """A kubeconfig with a token and a client certificate, against a server that fails the
    handshake, one that is not there, one that rejects the credentials: the CLI's output and
    the errors name the server and the problem, never the token, a key or a certificate."""
    user = {
        "client-certificate-data": _data(pki / "planner.crt"),
        "client-key-data": _data(pki / "planner.key"),
    }
    outputs: list[str] = []
    with serving(FakeApiServer(_items()), tls=_tls(pki)) as fake:
        # the system's CAs: the handshake fails
        path = fake.kubeconfig(tmp_path, user=user)
        result = runner.invoke(app, ["plan", "--kubeconfig", str(path)])
        assert result.exit_code == 1
        outputs.append(result.stdout + result.stderr)
        # the CA, but a token that is wrong and a certificate of another name: 401
        fake.client_cn = "someone-else"
        cluster = {"certificate-authority-data": _data(pki / "ca.crt")}
        path = fake.kubeconfig(tmp_path, token="wrong-token-1234", cluster=cluster, user=user)
        result = runner.invoke(app, ["plan", "--kubeconfig", str(path)])
        assert result.exit_code == 1 and "401 Unauthorized" in result.stderr
        outputs.append(result.stdout + result.stderr)
    result = runner.invoke(app, ["plan", "--kubeconfig", str(path)])  # nobody listens there now
    assert result.exit_code == 1 and "cannot reach the API server" in result.stderr
    outputs.append(result.stdout + result.stderr)
    for output in outputs:
        assert TOKEN not in output and "wrong-token-1234" not in output
        assert not any(p in output for p in _pems(pki)), output
        assert len(output.strip().splitlines()) == 1, output


def test_a_kubeconfig_that_cannot_be_read_does_not_quote_its_token(tmp_path: Path) -> None:
    """A YAML error in the kubeconfig: the line names the file, not what is written in it."""
    path = tmp_path / "kubeconfig"
    path.write_text(f"apiVersion: v1\nusers:\n- name: u\n  user: {{token: {TOKEN}-secret-value\n")
    with pytest.raises(live.LiveError) as exc:
        live.read(live.Target(kubeconfig=str(path)))
    assert str(exc.value).startswith(f"kubeconfig {path}: ")
    assert "secret-value" not in str(exc.value)
