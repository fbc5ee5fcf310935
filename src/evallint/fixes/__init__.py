"""Fixers, one small module per rule family, registered with :func:`evallint.fixing.fixer`.

:mod:`evallint.fixing` imports a module here only when a fix of one of its codes is asked for.
"""
