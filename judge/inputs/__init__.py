"""judge.inputs."""
