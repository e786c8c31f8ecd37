"""Plot helpers: every ``plot_*`` returns ``(fig, data)`` where ``data`` holds the plotted arrays."""
