"""The serving kinds' modules: each its spec, its chart's values model and its values."""
