package broker

// Placeholder; the send helper replaces this file.

func (b *Broker) registerSendHandlers()  {}
func (b *Broker) registerAdminHandlers() {}
