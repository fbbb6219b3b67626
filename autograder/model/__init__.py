"""The submission model: what a student handed in, who they are, what each check scored, and how it is
stored. Imports nothing above it but the package's foundation (assignment, releases, quiz, text)."""
