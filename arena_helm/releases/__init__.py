"""Acting on releases that exist: the read side's join (releases, job objects, pods), delete/prune,
suspend/resume, rerun/export, attach, completion notices."""
