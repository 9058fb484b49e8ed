"""`zcube expand`: grow a deployed fabric within its capacity by adding only (issue 26 item 4, docs/expand.md)."""
