Feature: Empty: a lab with no step
  It grades nothing.
