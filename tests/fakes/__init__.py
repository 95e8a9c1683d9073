"""Fakes at the process edge: real local servers speaking real wire formats."""
