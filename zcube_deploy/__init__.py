"""zcube-deploy: plan, render, cable, push and verify ZCube GPU-cluster fabrics."""

__version__ = "0.1.0"
