"""The memory service under load, the parts of ``python -m evals.bench_service`` (whose module
docstring says what the benchmark does and how to read it): ``home`` builds and caches the home
and makes the API keys, ``loop`` is one client's closed loop over the op mix, ``clients`` runs it
in threads or client processes and combines the figures, ``service`` starts and stops ``serve``
as a subprocess, ``writes`` reads every acknowledged write back, ``paired`` runs each in-process
run interleaved with its HTTP run in blocks (the default), ``pool`` keeps the client processes
across those blocks, ``sequence`` runs the baselines and the HTTP runs one after another
(``--sequential``) and holds the floor and the upkeep both use, and ``report`` judges the targets
and writes the table and the JSON result. Modules import only the standard library at module
level: client processes are spawned and import ``clients`` or ``pool`` (and, through them,
``home`` and ``loop``)."""
