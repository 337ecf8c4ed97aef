"""Generated gRPC code for the tablanette.v1 protocol (see proto/)."""
