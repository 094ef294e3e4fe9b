"""Run reports: how each kind of run becomes a folder of files a person can read.

One module per kind of run. Each has `build_run(config, note, *, record_git=True)`, which runs
the lesson's code for `config` and returns the run's files (`course.runs.RunFiles`: name ->
bytes): the manifest, the summary, the plots, the log and `README.md` (written by
`render_readme`). The lessons themselves live one floor down (`course.evaluation`,
`course.selection`, `course.bandit`, ...) and never import from here.
"""
