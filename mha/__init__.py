"""Multi-head attention in NumPy: the package behind the course.

Every chapter, widget, exercise and grader of the course imports this package.
"""

__version__ = "0.1.0"

__all__: list[str] = []
