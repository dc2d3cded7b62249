"""The memory service under load, the parts of ``python -m evals.bench_service`` (whose module
docstring says what the benchmark does and how to read it): ``home`` builds and caches the home
and makes the API keys, ``loop`` is one client's closed loop over the op mix, ``clients`` runs it
in threads or client processes and combines the figures, ``service`` starts and stops ``serve``
as a subprocess, ``writes`` reads every acknowledged write back, ``sequence`` runs the baselines
and the HTTP runs in order, and ``report`` judges the targets and writes the table and the JSON
result. Modules import only the standard library at module level: client processes are spawned
and import ``clients`` (and, through it, ``home`` and ``loop``)."""
