"""Inventory: the user's description of the cluster, loaded and validated with every problem collected."""

from zcube_deploy.inventory.load import Rack, ResolvedInventory, Server, load_inventory, resolve_inventory

__all__ = ["Rack", "ResolvedInventory", "Server", "load_inventory", "resolve_inventory"]
