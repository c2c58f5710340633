"""What every family shares to make a release: the pod flags and specs, the values blocks and models, the
render -> install -> wait pipeline, provenance and the checks made before an install."""
