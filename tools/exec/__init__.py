"""Support for run_command and job_output: processes, output capture, background jobs, the sandbox."""
