"""NAPALM community-driver entry: ``napalm.get_network_driver("ruijie_rgos")`` finds this module."""

from zcube_deploy.platforms.ruijie_rgos.driver import RuijieRGOSDriver

__all__ = ["RuijieRGOSDriver"]
