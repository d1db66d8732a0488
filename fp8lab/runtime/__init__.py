"""Runtime: processes, executors, watchdogs, progress, exit statuses and files."""
