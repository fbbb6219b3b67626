"""Hidden graders and the grading engine for the attention assignment.

One submission's way from the command line to results.json:

    cli.py                 parses `grade PATH... --out DIR`, then calls api.py (the public API), which
                           runs classrun.py: the class run, which calls pool.batch
    model/submission.py    reads each submission as data (no link followed, sizes bounded): cells to run
    pool/batch.py          keeps unchanged earlier results; sends the rest to a pool of workers
    pool/parent.py         the workers' parent: forks the zygote (torch imported, nothing of the
                           grader's), collects the graders once, forks every local worker from there
    pool/worker.py         a worker process: one zygote, one pytest session, many submissions
      isolation/zygote.py    forks one confined sandbox per part (confinement.py: namespaces, an
                             allow-list file system from policy.py, cgroups.py, seccomp.py, rlimits)
      engine/session.py      runs the graders/test_<part>.py items for the submission (plugin.py:
                             fixtures, one CheckResult per check); each check talks to the sandbox
                             through isolation/proxy.py (Student) -> wire.py -> isolation/server.py
    model/results.py       GradedSubmission: the one results model, back to the batch as JSON
    reports/               results.json (Gradescope), feedback.html, grades.csv, the class table
    nbgrader/              --nbgrader: the course, scores into its gradebook, grade cells, release stubs

`assignment.py` holds the assignment's facts (parts, names, notebooks, cell ids) once. The rooms of the
package and what each may import: docs/adapting.md (checked by tests/unit/test_layers.py).
"""
