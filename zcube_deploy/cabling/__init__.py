"""Cabling outputs: cut-sheet workbook, BOM, cable list CSV, NetBox CSV, Graphviz DOT, status read-back."""
