"""Pure ZCube topology maths: sizing (zcube.md section 3) and the wiring rule."""
