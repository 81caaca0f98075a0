"""Classroom tools: release assignments to students and grade what they hand in."""
