"""What a plan prints: reading, not deciding — nothing here changes a result.

`summary` counts the numbers a plan reports on the realized plan (placed, objective, bound,
status), `objects` writes the Pods and claims as the scheduler leaves them (`-o yaml|json`,
`changed`, `full`), `table` is `-o table` (rows per pod and per node), and `report` is
`plan --report`: one self-contained HTML page (the Jinja2 template `report.html.j2`).
"""
