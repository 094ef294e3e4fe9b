"""The `course` command's subcommands, one module per story, in the order of the course.

Each module has `register(subparsers)`, which adds its subcommand(s) with argparse and sets
`func`: the function that receives the parsed arguments and returns an exit code. The modules
only parse, call the lesson or the report, and print; `course.cli.main` lists them and turns
every expected error into one line on stderr.
"""
