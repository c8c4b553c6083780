"""What a plan prints: reading, not deciding — nothing here changes a result.

`objects` writes the Pods and claims as the scheduler leaves them (`-o yaml|json`, `changed`,
`full`), `table` is `-o table` (rows per pod and per node), and `report` is `plan --report`:
one self-contained HTML page (the Jinja2 template `report.html.j2`). The numbers a plan
reports are counted once, in `planning.outcome.PlanSummary`.
"""
