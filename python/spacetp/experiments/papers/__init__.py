"""One module per reproduced paper (the module name is the paper's name); each defines
`run(ctx: spacetp.experiments.framework.Context) -> Outcome`."""
