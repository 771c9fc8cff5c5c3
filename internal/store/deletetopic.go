package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	jsoniter "github.com/json-iterator/go"
)

// deletedTopicsFile records, per deleted topic, the commit-log offset at
// deletion, so recovery does not resurrect its older messages.
const deletedTopicsFile = "deletedTopics.json"

// DeleteTopic drops the consume queues of topic (its records stay in the
// commit log until their segment goes). A later message to the topic
// starts again at queue offset 0, like Java.
func (s *Store) DeleteTopic(topic string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return ErrClosed
	}
	if !validTopic(topic) {
		return fmt.Errorf("%w: topic %q", ErrInvalidMessage, topic)
	}
	s.deleted[topic] = s.end.Load()
	if err := s.saveDeleted(); err != nil {
		return err
	}
	s.life.Lock()
	for k, q := range s.queues {
		if k.topic == topic {
			delete(s.queues, k)
			q.close()
		}
	}
	s.life.Unlock()
	// Closed files may still sit in the dirty list; their sync just fails.
	keep := s.dirty[:0]
	for _, f := range s.dirty {
		if !f.closed.Load() {
			keep = append(keep, f)
		}
	}
	clear(s.dirty[len(keep):])
	s.dirty = keep
	if err := os.RemoveAll(s.dirPath("consumequeue", topic)); err != nil {
		return fmt.Errorf("%w: remove consume queues of %s: %v", ErrIO, topic, err)
	}
	return nil
}

func (s *Store) loadDeleted() error {
	b, err := ReadConfigFile(s.dirPath(deletedTopicsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(b, &s.deleted)
	}
	if err != nil {
		return fmt.Errorf("rocketmq: store: read %s: %w", deletedTopicsFile, err)
	}
	return nil
}

func (s *Store) saveDeleted() error {
	b, err := jsoniter.ConfigCompatibleWithStandardLibrary.Marshal(s.deleted)
	if err != nil {
		return err
	}
	return WriteConfigFile(s.dirPath(deletedTopicsFile), b)
}
