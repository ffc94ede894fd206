"""The `keel` command line front end: flags, dispatch, headless printing and the subcommands."""
