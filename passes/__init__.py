"""Source-to-source passes over the ascx IR, one module per pass, plus the registry."""
