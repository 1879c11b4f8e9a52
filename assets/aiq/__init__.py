"""Executed ArchitectureIQ-shaped questions (synthetic, CPU) and the demo solver's proposals; see core/kb/README.md."""
