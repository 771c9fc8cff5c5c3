// Request and response codes from docs/PROTOCOL.md §2, named after Java.

package remoting

import "strconv"

// Request codes (docs/PROTOCOL.md §2.1). Codes above 32767 do not fit the
// int16 code of a ROCKETMQ binary header; send them with JSON headers.
const (
	SendMessage                          int32 = 10     // SEND_MESSAGE
	PullMessage                          int32 = 11     // PULL_MESSAGE
	QueryMessage                         int32 = 12     // QUERY_MESSAGE
	QueryBrokerOffset                    int32 = 13     // QUERY_BROKER_OFFSET
	QueryConsumerOffset                  int32 = 14     // QUERY_CONSUMER_OFFSET
	UpdateConsumerOffset                 int32 = 15     // UPDATE_CONSUMER_OFFSET
	UpdateAndCreateTopic                 int32 = 17     // UPDATE_AND_CREATE_TOPIC
	UpdateAndCreateTopicList             int32 = 18     // UPDATE_AND_CREATE_TOPIC_LIST
	GetAllTopicConfig                    int32 = 21     // GET_ALL_TOPIC_CONFIG
	GetTopicConfigList                   int32 = 22     // GET_TOPIC_CONFIG_LIST
	GetTopicNameList                     int32 = 23     // GET_TOPIC_NAME_LIST
	UpdateBrokerConfig                   int32 = 25     // UPDATE_BROKER_CONFIG
	GetBrokerConfig                      int32 = 26     // GET_BROKER_CONFIG
	TriggerDeleteFiles                   int32 = 27     // TRIGGER_DELETE_FILES
	GetBrokerRuntimeInfo                 int32 = 28     // GET_BROKER_RUNTIME_INFO
	SearchOffsetByTimestamp              int32 = 29     // SEARCH_OFFSET_BY_TIMESTAMP
	GetMaxOffset                         int32 = 30     // GET_MAX_OFFSET
	GetMinOffset                         int32 = 31     // GET_MIN_OFFSET
	GetEarliestMsgStoreTime              int32 = 32     // GET_EARLIEST_MSG_STORETIME
	ViewMessageByID                      int32 = 33     // VIEW_MESSAGE_BY_ID
	HeartBeat                            int32 = 34     // HEART_BEAT
	UnregisterClient                     int32 = 35     // UNREGISTER_CLIENT
	ConsumerSendMsgBack                  int32 = 36     // CONSUMER_SEND_MSG_BACK
	EndTransaction                       int32 = 37     // END_TRANSACTION
	GetConsumerListByGroup               int32 = 38     // GET_CONSUMER_LIST_BY_GROUP
	CheckTransactionState                int32 = 39     // CHECK_TRANSACTION_STATE
	NotifyConsumerIDsChanged             int32 = 40     // NOTIFY_CONSUMER_IDS_CHANGED
	LockBatchMQ                          int32 = 41     // LOCK_BATCH_MQ
	UnlockBatchMQ                        int32 = 42     // UNLOCK_BATCH_MQ
	GetAllConsumerOffset                 int32 = 43     // GET_ALL_CONSUMER_OFFSET
	GetAllDelayOffset                    int32 = 45     // GET_ALL_DELAY_OFFSET
	CheckClientConfig                    int32 = 46     // CHECK_CLIENT_CONFIG
	GetClientConfig                      int32 = 47     // GET_CLIENT_CONFIG
	UpdateAndCreateACLConfig             int32 = 50     // UPDATE_AND_CREATE_ACL_CONFIG
	DeleteACLConfig                      int32 = 51     // DELETE_ACL_CONFIG
	GetBrokerClusterACLInfo              int32 = 52     // GET_BROKER_CLUSTER_ACL_INFO
	UpdateGlobalWhiteAddrsConfig         int32 = 53     // UPDATE_GLOBAL_WHITE_ADDRS_CONFIG
	GetBrokerClusterACLConfig            int32 = 54     // GET_BROKER_CLUSTER_ACL_CONFIG
	GetTimerCheckPoint                   int32 = 60     // GET_TIMER_CHECK_POINT
	GetTimerMetrics                      int32 = 61     // GET_TIMER_METRICS
	PutKVConfig                          int32 = 100    // PUT_KV_CONFIG
	GetKVConfig                          int32 = 101    // GET_KV_CONFIG
	DeleteKVConfig                       int32 = 102    // DELETE_KV_CONFIG
	RegisterBroker                       int32 = 103    // REGISTER_BROKER
	UnregisterBroker                     int32 = 104    // UNREGISTER_BROKER
	GetRouteInfoByTopic                  int32 = 105    // GET_ROUTEINFO_BY_TOPIC
	GetBrokerClusterInfo                 int32 = 106    // GET_BROKER_CLUSTER_INFO
	UpdateAndCreateSubscriptionGroup     int32 = 200    // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
	GetAllSubscriptionGroupConfig        int32 = 201    // GET_ALL_SUBSCRIPTIONGROUP_CONFIG
	GetTopicStatsInfo                    int32 = 202    // GET_TOPIC_STATS_INFO
	GetConsumerConnectionList            int32 = 203    // GET_CONSUMER_CONNECTION_LIST
	GetProducerConnectionList            int32 = 204    // GET_PRODUCER_CONNECTION_LIST
	WipeWritePermOfBroker                int32 = 205    // WIPE_WRITE_PERM_OF_BROKER
	GetAllTopicListFromNameServer        int32 = 206    // GET_ALL_TOPIC_LIST_FROM_NAMESERVER
	DeleteSubscriptionGroup              int32 = 207    // DELETE_SUBSCRIPTIONGROUP
	GetConsumeStats                      int32 = 208    // GET_CONSUME_STATS
	SuspendConsumer                      int32 = 209    // SUSPEND_CONSUMER
	ResumeConsumer                       int32 = 210    // RESUME_CONSUMER
	ResetConsumerOffsetInConsumer        int32 = 211    // RESET_CONSUMER_OFFSET_IN_CONSUMER
	ResetConsumerOffsetInBroker          int32 = 212    // RESET_CONSUMER_OFFSET_IN_BROKER
	AdjustConsumerThreadPool             int32 = 213    // ADJUST_CONSUMER_THREAD_POOL
	WhoConsumeTheMessage                 int32 = 214    // WHO_CONSUME_THE_MESSAGE
	DeleteTopicInBroker                  int32 = 215    // DELETE_TOPIC_IN_BROKER
	DeleteTopicInNamesrv                 int32 = 216    // DELETE_TOPIC_IN_NAMESRV
	RegisterTopicInNamesrv               int32 = 217    // REGISTER_TOPIC_IN_NAMESRV
	GetKVListByNamespace                 int32 = 219    // GET_KVLIST_BY_NAMESPACE
	ResetConsumerClientOffset            int32 = 220    // RESET_CONSUMER_CLIENT_OFFSET
	GetConsumerStatusFromClient          int32 = 221    // GET_CONSUMER_STATUS_FROM_CLIENT
	InvokeBrokerToResetOffset            int32 = 222    // INVOKE_BROKER_TO_RESET_OFFSET
	InvokeBrokerToGetConsumerStatus      int32 = 223    // INVOKE_BROKER_TO_GET_CONSUMER_STATUS
	GetTopicsByCluster                   int32 = 224    // GET_TOPICS_BY_CLUSTER
	UpdateAndCreateSubscriptionGroupList int32 = 225    // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST
	QueryTopicConsumeByWho               int32 = 300    // QUERY_TOPIC_CONSUME_BY_WHO
	RegisterFilterServer                 int32 = 301    // REGISTER_FILTER_SERVER
	RegisterMessageFilterClass           int32 = 302    // REGISTER_MESSAGE_FILTER_CLASS
	QueryConsumeTimeSpan                 int32 = 303    // QUERY_CONSUME_TIME_SPAN
	GetSystemTopicListFromNS             int32 = 304    // GET_SYSTEM_TOPIC_LIST_FROM_NS
	GetSystemTopicListFromBroker         int32 = 305    // GET_SYSTEM_TOPIC_LIST_FROM_BROKER
	CleanExpiredConsumeQueue             int32 = 306    // CLEAN_EXPIRED_CONSUMEQUEUE
	GetConsumerRunningInfo               int32 = 307    // GET_CONSUMER_RUNNING_INFO
	QueryCorrectionOffset                int32 = 308    // QUERY_CORRECTION_OFFSET
	ConsumeMessageDirectly               int32 = 309    // CONSUME_MESSAGE_DIRECTLY
	SendMessageV2                        int32 = 310    // SEND_MESSAGE_V2
	GetUnitTopicList                     int32 = 311    // GET_UNIT_TOPIC_LIST
	GetHasUnitSubTopicList               int32 = 312    // GET_HAS_UNIT_SUB_TOPIC_LIST
	GetHasUnitSubUnunitTopicList         int32 = 313    // GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST
	CloneGroupOffset                     int32 = 314    // CLONE_GROUP_OFFSET
	ViewBrokerStatsData                  int32 = 315    // VIEW_BROKER_STATS_DATA
	CleanUnusedTopic                     int32 = 316    // CLEAN_UNUSED_TOPIC
	GetBrokerConsumeStats                int32 = 317    // GET_BROKER_CONSUME_STATS
	UpdateNamesrvConfig                  int32 = 318    // UPDATE_NAMESRV_CONFIG
	GetNamesrvConfig                     int32 = 319    // GET_NAMESRV_CONFIG
	SendBatchMessage                     int32 = 320    // SEND_BATCH_MESSAGE
	QueryConsumeQueue                    int32 = 321    // QUERY_CONSUME_QUEUE
	QueryDataVersion                     int32 = 322    // QUERY_DATA_VERSION
	ResumeCheckHalfMessage               int32 = 323    // RESUME_CHECK_HALF_MESSAGE
	SendReplyMessage                     int32 = 324    // SEND_REPLY_MESSAGE
	SendReplyMessageV2                   int32 = 325    // SEND_REPLY_MESSAGE_V2
	PushReplyMessageToClient             int32 = 326    // PUSH_REPLY_MESSAGE_TO_CLIENT
	AddWritePermOfBroker                 int32 = 327    // ADD_WRITE_PERM_OF_BROKER
	GetAllProducerInfo                   int32 = 328    // GET_ALL_PRODUCER_INFO
	DeleteExpiredCommitLog               int32 = 329    // DELETE_EXPIRED_COMMITLOG
	QueryTopicsByConsumer                int32 = 343    // QUERY_TOPICS_BY_CONSUMER
	QuerySubscriptionByConsumer          int32 = 345    // QUERY_SUBSCRIPTION_BY_CONSUMER
	GetTopicConfig                       int32 = 351    // GET_TOPIC_CONFIG
	GetSubscriptionGroupConfig           int32 = 352    // GET_SUBSCRIPTIONGROUP_CONFIG
	UpdateAndGetGroupForbidden           int32 = 353    // UPDATE_AND_GET_GROUP_FORBIDDEN
	LitePullMessage                      int32 = 361    // LITE_PULL_MESSAGE
	RecallMessage                        int32 = 370    // RECALL_MESSAGE
	QueryAssignment                      int32 = 400    // QUERY_ASSIGNMENT
	SetMessageRequestMode                int32 = 401    // SET_MESSAGE_REQUEST_MODE
	GetAllMessageRequestMode             int32 = 402    // GET_ALL_MESSAGE_REQUEST_MODE
	UpdateAndCreateStaticTopic           int32 = 513    // UPDATE_AND_CREATE_STATIC_TOPIC
	GetBrokerMemberGroup                 int32 = 901    // GET_BROKER_MEMBER_GROUP
	BrokerHeartbeat                      int32 = 904    // BROKER_HEARTBEAT
	PopMessage                           int32 = 200050 // POP_MESSAGE
	AckMessage                           int32 = 200051 // ACK_MESSAGE
	PeekMessage                          int32 = 200052 // PEEK_MESSAGE
	ChangeMessageInvisibleTime           int32 = 200053 // CHANGE_MESSAGE_INVISIBLETIME
	Notification                         int32 = 200054 // NOTIFICATION
	PollingInfo                          int32 = 200055 // POLLING_INFO
	PopRollback                          int32 = 200056 // POP_ROLLBACK
	BatchAckMessage                      int32 = 200151 // BATCH_ACK_MESSAGE
)

// Response codes (docs/PROTOCOL.md §2.2). 209..211 carry other meanings in 4.x:
// see UpdateAndCreateACLConfigFailed and the two constants after it.
const (
	Success                    int32 = 0     // SUCCESS
	SystemError                int32 = 1     // SYSTEM_ERROR
	SystemBusy                 int32 = 2     // SYSTEM_BUSY
	RequestCodeNotSupported    int32 = 3     // REQUEST_CODE_NOT_SUPPORTED
	TransactionFailed          int32 = 4     // TRANSACTION_FAILED
	FlushDiskTimeout           int32 = 10    // FLUSH_DISK_TIMEOUT
	SlaveNotAvailable          int32 = 11    // SLAVE_NOT_AVAILABLE
	FlushSlaveTimeout          int32 = 12    // FLUSH_SLAVE_TIMEOUT
	MessageIllegal             int32 = 13    // MESSAGE_ILLEGAL
	ServiceNotAvailable        int32 = 14    // SERVICE_NOT_AVAILABLE
	VersionNotSupported        int32 = 15    // VERSION_NOT_SUPPORTED
	NoPermission               int32 = 16    // NO_PERMISSION
	TopicNotExist              int32 = 17    // TOPIC_NOT_EXIST
	TopicExistAlready          int32 = 18    // TOPIC_EXIST_ALREADY
	PullNotFound               int32 = 19    // PULL_NOT_FOUND
	PullRetryImmediately       int32 = 20    // PULL_RETRY_IMMEDIATELY
	PullOffsetMoved            int32 = 21    // PULL_OFFSET_MOVED
	QueryNotFound              int32 = 22    // QUERY_NOT_FOUND
	SubscriptionParseFailed    int32 = 23    // SUBSCRIPTION_PARSE_FAILED
	SubscriptionNotExist       int32 = 24    // SUBSCRIPTION_NOT_EXIST
	SubscriptionNotLatest      int32 = 25    // SUBSCRIPTION_NOT_LATEST
	SubscriptionGroupNotExist  int32 = 26    // SUBSCRIPTION_GROUP_NOT_EXIST
	FilterDataNotExist         int32 = 27    // FILTER_DATA_NOT_EXIST
	FilterDataNotLatest        int32 = 28    // FILTER_DATA_NOT_LATEST
	InvalidParameter           int32 = 29    // INVALID_PARAMETER
	TransactionShouldCommit    int32 = 200   // TRANSACTION_SHOULD_COMMIT
	TransactionShouldRollback  int32 = 201   // TRANSACTION_SHOULD_ROLLBACK
	TransactionStateUnknown    int32 = 202   // TRANSACTION_STATE_UNKNOW
	TransactionStateGroupWrong int32 = 203   // TRANSACTION_STATE_GROUP_WRONG
	NoBuyerID                  int32 = 204   // NO_BUYER_ID
	NotInCurrentUnit           int32 = 205   // NOT_IN_CURRENT_UNIT
	ConsumerNotOnline          int32 = 206   // CONSUMER_NOT_ONLINE
	ConsumeMsgTimeout          int32 = 207   // CONSUME_MSG_TIMEOUT
	NoMessage                  int32 = 208   // NO_MESSAGE
	PollingFull                int32 = 209   // POLLING_FULL
	PollingTimeout             int32 = 210   // POLLING_TIMEOUT
	BrokerNotExist             int32 = 211   // BROKER_NOT_EXIST
	BrokerDispatchNotComplete  int32 = 212   // BROKER_DISPATCH_NOT_COMPLETE
	BroadcastConsumption       int32 = 213   // BROADCAST_CONSUMPTION
	FlowControl                int32 = 215   // FLOW_CONTROL
	NotLeaderForQueue          int32 = 501   // NOT_LEADER_FOR_QUEUE
	IllegalOperation           int32 = 604   // ILLEGAL_OPERATION
	GoAway                     int32 = 1500  // GO_AWAY
	UserNotExist               int32 = 3001  // USER_NOT_EXIST
	PolicyNotExist             int32 = 3002  // POLICY_NOT_EXIST
	RPCUnknown                 int32 = -1000 // RPC_UNKNOWN
	RPCAddrIsNull              int32 = -1002 // RPC_ADDR_IS_NULL
	RPCSendToChannelFailed     int32 = -1004 // RPC_SEND_TO_CHANNEL_FAILED
	RPCTimeOut                 int32 = -1006 // RPC_TIME_OUT

	// 4.x names of 209..211 (reused by 5.x for the POP protocol).
	UpdateAndCreateACLConfigFailed     int32 = 209 // UPDATE_AND_CREATE_ACL_CONFIG_FAILED
	DeleteACLConfigFailed              int32 = 210 // DELETE_ACL_CONFIG_FAILED
	UpdateGlobalWhiteAddrsConfigFailed int32 = 211 // UPDATE_GLOBAL_WHITE_ADDRS_CONFIG_FAILED
)

// RequestCodeName returns the Java name of a request code, or its number.
func RequestCodeName(code int32) string {
	switch code {
	case SendMessage:
		return "SEND_MESSAGE"
	case PullMessage:
		return "PULL_MESSAGE"
	case QueryMessage:
		return "QUERY_MESSAGE"
	case QueryBrokerOffset:
		return "QUERY_BROKER_OFFSET"
	case QueryConsumerOffset:
		return "QUERY_CONSUMER_OFFSET"
	case UpdateConsumerOffset:
		return "UPDATE_CONSUMER_OFFSET"
	case UpdateAndCreateTopic:
		return "UPDATE_AND_CREATE_TOPIC"
	case UpdateAndCreateTopicList:
		return "UPDATE_AND_CREATE_TOPIC_LIST"
	case GetAllTopicConfig:
		return "GET_ALL_TOPIC_CONFIG"
	case GetTopicConfigList:
		return "GET_TOPIC_CONFIG_LIST"
	case GetTopicNameList:
		return "GET_TOPIC_NAME_LIST"
	case UpdateBrokerConfig:
		return "UPDATE_BROKER_CONFIG"
	case GetBrokerConfig:
		return "GET_BROKER_CONFIG"
	case TriggerDeleteFiles:
		return "TRIGGER_DELETE_FILES"
	case GetBrokerRuntimeInfo:
		return "GET_BROKER_RUNTIME_INFO"
	case SearchOffsetByTimestamp:
		return "SEARCH_OFFSET_BY_TIMESTAMP"
	case GetMaxOffset:
		return "GET_MAX_OFFSET"
	case GetMinOffset:
		return "GET_MIN_OFFSET"
	case GetEarliestMsgStoreTime:
		return "GET_EARLIEST_MSG_STORETIME"
	case ViewMessageByID:
		return "VIEW_MESSAGE_BY_ID"
	case HeartBeat:
		return "HEART_BEAT"
	case UnregisterClient:
		return "UNREGISTER_CLIENT"
	case ConsumerSendMsgBack:
		return "CONSUMER_SEND_MSG_BACK"
	case EndTransaction:
		return "END_TRANSACTION"
	case GetConsumerListByGroup:
		return "GET_CONSUMER_LIST_BY_GROUP"
	case CheckTransactionState:
		return "CHECK_TRANSACTION_STATE"
	case NotifyConsumerIDsChanged:
		return "NOTIFY_CONSUMER_IDS_CHANGED"
	case LockBatchMQ:
		return "LOCK_BATCH_MQ"
	case UnlockBatchMQ:
		return "UNLOCK_BATCH_MQ"
	case GetAllConsumerOffset:
		return "GET_ALL_CONSUMER_OFFSET"
	case GetAllDelayOffset:
		return "GET_ALL_DELAY_OFFSET"
	case CheckClientConfig:
		return "CHECK_CLIENT_CONFIG"
	case GetClientConfig:
		return "GET_CLIENT_CONFIG"
	case UpdateAndCreateACLConfig:
		return "UPDATE_AND_CREATE_ACL_CONFIG"
	case DeleteACLConfig:
		return "DELETE_ACL_CONFIG"
	case GetBrokerClusterACLInfo:
		return "GET_BROKER_CLUSTER_ACL_INFO"
	case UpdateGlobalWhiteAddrsConfig:
		return "UPDATE_GLOBAL_WHITE_ADDRS_CONFIG"
	case GetBrokerClusterACLConfig:
		return "GET_BROKER_CLUSTER_ACL_CONFIG"
	case GetTimerCheckPoint:
		return "GET_TIMER_CHECK_POINT"
	case GetTimerMetrics:
		return "GET_TIMER_METRICS"
	case PutKVConfig:
		return "PUT_KV_CONFIG"
	case GetKVConfig:
		return "GET_KV_CONFIG"
	case DeleteKVConfig:
		return "DELETE_KV_CONFIG"
	case RegisterBroker:
		return "REGISTER_BROKER"
	case UnregisterBroker:
		return "UNREGISTER_BROKER"
	case GetRouteInfoByTopic:
		return "GET_ROUTEINFO_BY_TOPIC"
	case GetBrokerClusterInfo:
		return "GET_BROKER_CLUSTER_INFO"
	case UpdateAndCreateSubscriptionGroup:
		return "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP"
	case GetAllSubscriptionGroupConfig:
		return "GET_ALL_SUBSCRIPTIONGROUP_CONFIG"
	case GetTopicStatsInfo:
		return "GET_TOPIC_STATS_INFO"
	case GetConsumerConnectionList:
		return "GET_CONSUMER_CONNECTION_LIST"
	case GetProducerConnectionList:
		return "GET_PRODUCER_CONNECTION_LIST"
	case WipeWritePermOfBroker:
		return "WIPE_WRITE_PERM_OF_BROKER"
	case GetAllTopicListFromNameServer:
		return "GET_ALL_TOPIC_LIST_FROM_NAMESERVER"
	case DeleteSubscriptionGroup:
		return "DELETE_SUBSCRIPTIONGROUP"
	case GetConsumeStats:
		return "GET_CONSUME_STATS"
	case SuspendConsumer:
		return "SUSPEND_CONSUMER"
	case ResumeConsumer:
		return "RESUME_CONSUMER"
	case ResetConsumerOffsetInConsumer:
		return "RESET_CONSUMER_OFFSET_IN_CONSUMER"
	case ResetConsumerOffsetInBroker:
		return "RESET_CONSUMER_OFFSET_IN_BROKER"
	case AdjustConsumerThreadPool:
		return "ADJUST_CONSUMER_THREAD_POOL"
	case WhoConsumeTheMessage:
		return "WHO_CONSUME_THE_MESSAGE"
	case DeleteTopicInBroker:
		return "DELETE_TOPIC_IN_BROKER"
	case DeleteTopicInNamesrv:
		return "DELETE_TOPIC_IN_NAMESRV"
	case RegisterTopicInNamesrv:
		return "REGISTER_TOPIC_IN_NAMESRV"
	case GetKVListByNamespace:
		return "GET_KVLIST_BY_NAMESPACE"
	case ResetConsumerClientOffset:
		return "RESET_CONSUMER_CLIENT_OFFSET"
	case GetConsumerStatusFromClient:
		return "GET_CONSUMER_STATUS_FROM_CLIENT"
	case InvokeBrokerToResetOffset:
		return "INVOKE_BROKER_TO_RESET_OFFSET"
	case InvokeBrokerToGetConsumerStatus:
		return "INVOKE_BROKER_TO_GET_CONSUMER_STATUS"
	case GetTopicsByCluster:
		return "GET_TOPICS_BY_CLUSTER"
	case UpdateAndCreateSubscriptionGroupList:
		return "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST"
	case QueryTopicConsumeByWho:
		return "QUERY_TOPIC_CONSUME_BY_WHO"
	case RegisterFilterServer:
		return "REGISTER_FILTER_SERVER"
	case RegisterMessageFilterClass:
		return "REGISTER_MESSAGE_FILTER_CLASS"
	case QueryConsumeTimeSpan:
		return "QUERY_CONSUME_TIME_SPAN"
	case GetSystemTopicListFromNS:
		return "GET_SYSTEM_TOPIC_LIST_FROM_NS"
	case GetSystemTopicListFromBroker:
		return "GET_SYSTEM_TOPIC_LIST_FROM_BROKER"
	case CleanExpiredConsumeQueue:
		return "CLEAN_EXPIRED_CONSUMEQUEUE"
	case GetConsumerRunningInfo:
		return "GET_CONSUMER_RUNNING_INFO"
	case QueryCorrectionOffset:
		return "QUERY_CORRECTION_OFFSET"
	case ConsumeMessageDirectly:
		return "CONSUME_MESSAGE_DIRECTLY"
	case SendMessageV2:
		return "SEND_MESSAGE_V2"
	case GetUnitTopicList:
		return "GET_UNIT_TOPIC_LIST"
	case GetHasUnitSubTopicList:
		return "GET_HAS_UNIT_SUB_TOPIC_LIST"
	case GetHasUnitSubUnunitTopicList:
		return "GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST"
	case CloneGroupOffset:
		return "CLONE_GROUP_OFFSET"
	case ViewBrokerStatsData:
		return "VIEW_BROKER_STATS_DATA"
	case CleanUnusedTopic:
		return "CLEAN_UNUSED_TOPIC"
	case GetBrokerConsumeStats:
		return "GET_BROKER_CONSUME_STATS"
	case UpdateNamesrvConfig:
		return "UPDATE_NAMESRV_CONFIG"
	case GetNamesrvConfig:
		return "GET_NAMESRV_CONFIG"
	case SendBatchMessage:
		return "SEND_BATCH_MESSAGE"
	case QueryConsumeQueue:
		return "QUERY_CONSUME_QUEUE"
	case QueryDataVersion:
		return "QUERY_DATA_VERSION"
	case ResumeCheckHalfMessage:
		return "RESUME_CHECK_HALF_MESSAGE"
	case SendReplyMessage:
		return "SEND_REPLY_MESSAGE"
	case SendReplyMessageV2:
		return "SEND_REPLY_MESSAGE_V2"
	case PushReplyMessageToClient:
		return "PUSH_REPLY_MESSAGE_TO_CLIENT"
	case AddWritePermOfBroker:
		return "ADD_WRITE_PERM_OF_BROKER"
	case GetAllProducerInfo:
		return "GET_ALL_PRODUCER_INFO"
	case DeleteExpiredCommitLog:
		return "DELETE_EXPIRED_COMMITLOG"
	case QueryTopicsByConsumer:
		return "QUERY_TOPICS_BY_CONSUMER"
	case QuerySubscriptionByConsumer:
		return "QUERY_SUBSCRIPTION_BY_CONSUMER"
	case GetTopicConfig:
		return "GET_TOPIC_CONFIG"
	case GetSubscriptionGroupConfig:
		return "GET_SUBSCRIPTIONGROUP_CONFIG"
	case UpdateAndGetGroupForbidden:
		return "UPDATE_AND_GET_GROUP_FORBIDDEN"
	case LitePullMessage:
		return "LITE_PULL_MESSAGE"
	case RecallMessage:
		return "RECALL_MESSAGE"
	case QueryAssignment:
		return "QUERY_ASSIGNMENT"
	case SetMessageRequestMode:
		return "SET_MESSAGE_REQUEST_MODE"
	case GetAllMessageRequestMode:
		return "GET_ALL_MESSAGE_REQUEST_MODE"
	case UpdateAndCreateStaticTopic:
		return "UPDATE_AND_CREATE_STATIC_TOPIC"
	case GetBrokerMemberGroup:
		return "GET_BROKER_MEMBER_GROUP"
	case BrokerHeartbeat:
		return "BROKER_HEARTBEAT"
	case PopMessage:
		return "POP_MESSAGE"
	case AckMessage:
		return "ACK_MESSAGE"
	case PeekMessage:
		return "PEEK_MESSAGE"
	case ChangeMessageInvisibleTime:
		return "CHANGE_MESSAGE_INVISIBLETIME"
	case Notification:
		return "NOTIFICATION"
	case PollingInfo:
		return "POLLING_INFO"
	case PopRollback:
		return "POP_ROLLBACK"
	case BatchAckMessage:
		return "BATCH_ACK_MESSAGE"
	}
	return strconv.Itoa(int(code))
}

// ResponseCodeName returns the Java name of a response code, or its number.
// 209..211 get their 5.x names.
func ResponseCodeName(code int32) string {
	switch code {
	case Success:
		return "SUCCESS"
	case SystemError:
		return "SYSTEM_ERROR"
	case SystemBusy:
		return "SYSTEM_BUSY"
	case RequestCodeNotSupported:
		return "REQUEST_CODE_NOT_SUPPORTED"
	case TransactionFailed:
		return "TRANSACTION_FAILED"
	case FlushDiskTimeout:
		return "FLUSH_DISK_TIMEOUT"
	case SlaveNotAvailable:
		return "SLAVE_NOT_AVAILABLE"
	case FlushSlaveTimeout:
		return "FLUSH_SLAVE_TIMEOUT"
	case MessageIllegal:
		return "MESSAGE_ILLEGAL"
	case ServiceNotAvailable:
		return "SERVICE_NOT_AVAILABLE"
	case VersionNotSupported:
		return "VERSION_NOT_SUPPORTED"
	case NoPermission:
		return "NO_PERMISSION"
	case TopicNotExist:
		return "TOPIC_NOT_EXIST"
	case TopicExistAlready:
		return "TOPIC_EXIST_ALREADY"
	case PullNotFound:
		return "PULL_NOT_FOUND"
	case PullRetryImmediately:
		return "PULL_RETRY_IMMEDIATELY"
	case PullOffsetMoved:
		return "PULL_OFFSET_MOVED"
	case QueryNotFound:
		return "QUERY_NOT_FOUND"
	case SubscriptionParseFailed:
		return "SUBSCRIPTION_PARSE_FAILED"
	case SubscriptionNotExist:
		return "SUBSCRIPTION_NOT_EXIST"
	case SubscriptionNotLatest:
		return "SUBSCRIPTION_NOT_LATEST"
	case SubscriptionGroupNotExist:
		return "SUBSCRIPTION_GROUP_NOT_EXIST"
	case FilterDataNotExist:
		return "FILTER_DATA_NOT_EXIST"
	case FilterDataNotLatest:
		return "FILTER_DATA_NOT_LATEST"
	case InvalidParameter:
		return "INVALID_PARAMETER"
	case TransactionShouldCommit:
		return "TRANSACTION_SHOULD_COMMIT"
	case TransactionShouldRollback:
		return "TRANSACTION_SHOULD_ROLLBACK"
	case TransactionStateUnknown:
		return "TRANSACTION_STATE_UNKNOW"
	case TransactionStateGroupWrong:
		return "TRANSACTION_STATE_GROUP_WRONG"
	case NoBuyerID:
		return "NO_BUYER_ID"
	case NotInCurrentUnit:
		return "NOT_IN_CURRENT_UNIT"
	case ConsumerNotOnline:
		return "CONSUMER_NOT_ONLINE"
	case ConsumeMsgTimeout:
		return "CONSUME_MSG_TIMEOUT"
	case NoMessage:
		return "NO_MESSAGE"
	case PollingFull:
		return "POLLING_FULL"
	case PollingTimeout:
		return "POLLING_TIMEOUT"
	case BrokerNotExist:
		return "BROKER_NOT_EXIST"
	case BrokerDispatchNotComplete:
		return "BROKER_DISPATCH_NOT_COMPLETE"
	case BroadcastConsumption:
		return "BROADCAST_CONSUMPTION"
	case FlowControl:
		return "FLOW_CONTROL"
	case NotLeaderForQueue:
		return "NOT_LEADER_FOR_QUEUE"
	case IllegalOperation:
		return "ILLEGAL_OPERATION"
	case GoAway:
		return "GO_AWAY"
	case UserNotExist:
		return "USER_NOT_EXIST"
	case PolicyNotExist:
		return "POLICY_NOT_EXIST"
	case RPCUnknown:
		return "RPC_UNKNOWN"
	case RPCAddrIsNull:
		return "RPC_ADDR_IS_NULL"
	case RPCSendToChannelFailed:
		return "RPC_SEND_TO_CHANNEL_FAILED"
	case RPCTimeOut:
		return "RPC_TIME_OUT"
	}
	return strconv.Itoa(int(code))
}
