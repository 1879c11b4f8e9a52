"""A package whose model imports its blocks relatively."""
