"""The grading service: each submission graded as it reaches the nbgrader exchange, its feedback returned to
that student alone (nbgrader's feedback path, and a page behind the JupyterHub's login), as docs/service.md
describes. It grades through the public API (api.grade_class) and sits above it in the package's rooms.

    config.py    service.toml, typed and strict
    exchange.py  the new folders of inbound/, who made each, their notebooks read within bounds
    queue.py     the durable state (SQLite): each submission once, its state, its result; fair batches
    policy.py    attempts per period, and what a student may see before and after the due date
    grading.py   a batch graded by api.grade_class, in the sandbox
    feedback.py  `<exchange>/<course>/feedback/<hash>.html`, as nbgrader's release_feedback writes it
    render.py    the HTML of the pages and the feedback files, escaped
    web.py       the page under the hub (tornado, HubOAuthenticated)
    runner.py    the loop: poll, queue, grade, write feedback, serve; `serve --once`
"""
