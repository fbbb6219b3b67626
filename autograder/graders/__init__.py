"""The hidden graders: one pytest module per part of the assignment."""
