package broker

func (b *Broker) registerReplyHandlers() {}
