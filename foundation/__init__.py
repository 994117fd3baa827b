"""What everything imports: configuration, YAML editing, rendering and durable file I/O.

Imports no app and not the site package (the import contracts say so).
"""
