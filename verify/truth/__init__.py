"""Ground-truth methods. These modules never import the catalog."""
