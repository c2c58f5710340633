"""The TensorBoard family: standalone TensorBoards."""
