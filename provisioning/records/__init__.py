"""The records the provisioner writes as it works, one module per concern:

    leases             who works on a request and when (leases, waits)
    run_steps          a run's steps and their outcomes
    applied_objects    what the last apply left on each object
    outcomes           what a finished run changes: namespaces, projects, environments
    observations       what was seen: drift, the truth table
    campaign_progress  an upgrade campaign rolled out or back
    git_writes         GitOps writes waiting for their repository's writer
    watch_leases       the cluster watcher's lease and heartbeat

The columns of the domain's tables written here are listed, with why, in
docs/architecture.md ("What the provisioner writes in the domain's tables").
"""
