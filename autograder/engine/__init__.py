"""The grading engine: a session runs the graders' checks against one loaded submission, in a sandbox,
and the graders' API (`engine.kit`, the one module graders import from)."""
