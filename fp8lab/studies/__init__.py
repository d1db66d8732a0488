"""Studies: the tables the notebooks show, computed and tested here."""
