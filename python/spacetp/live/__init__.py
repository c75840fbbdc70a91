"""Real packets through spacetp's link models in real time (`spacetp emulate`)."""
