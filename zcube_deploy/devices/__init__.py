"""Device side: RGOS interface names, TextFSM parsers, the hier_config driver and the NAPALM driver."""
