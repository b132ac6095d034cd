package client

// WaitCleanup waits for c's background deletions (tests list the device's
// objects after them).
func WaitCleanup(c *Client) { c.waitCleanup() }
