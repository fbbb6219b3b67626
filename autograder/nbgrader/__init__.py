"""nbgrader integration: the course (`course`), scores into its gradebook (`gradebook`), grade cells
for `nbgrader autograde` (`gradecell`) and the per-notebook code stubs of the release (`stubs`)."""
