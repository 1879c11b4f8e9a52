"""The app's screens: queue, design, diff, reports, help, runs, knowledge base, and small dialogs."""
