"""Web Push to the human's devices (RFC 8030, 8291, 8292): keys, devices and their filters,
action capabilities, the payloads, and the background sender."""
