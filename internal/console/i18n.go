package console

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// langCookie keeps the language a person chose with the header's switch.
const langCookie = "rmq_lang"

// chooseLang picks the page language: a lang query (which the switch
// links carry, and which is kept in a cookie), the cookie, then the
// browser's Accept-Language, then English.
func chooseLang(w http.ResponseWriter, r *http.Request) string {
	if l := r.URL.Query().Get("lang"); known(l) {
		http.SetCookie(w, &http.Cookie{Name: langCookie, Value: l, Path: "/", MaxAge: 365 * 24 * 3600, HttpOnly: true, SameSite: http.SameSiteLaxMode})
		return l
	}
	if c, err := r.Cookie(langCookie); err == nil && known(c.Value) {
		return c.Value
	}
	return acceptLang(r.Header.Get("Accept-Language"))
}

func known(l string) bool { return l == "en" || l == "zh" }

// acceptLang returns the known language an Accept-Language header
// prefers most ("zh-CN,zh;q=0.9,en;q=0.8" is zh), or en.
func acceptLang(h string) string {
	best, bestQ := "en", -1.0
	for part := range strings.SplitSeq(h, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(tag)), "-")
		if known(base) && q > bestQ {
			best, bestQ = base, q
		}
	}
	return best
}

// T translates an English text of the pages into the page's language.
func (v *view) T(s string) string {
	if v.Lang == "zh" {
		if t, ok := zh[s]; ok {
			return t
		}
	}
	return s
}

// HTMLLang is the html element's lang.
func (v *view) HTMLLang() string {
	if v.Lang == "zh" {
		return "zh-CN"
	}
	return "en"
}

// LangURL is this page in another language.
func (v *view) LangURL(l string) string {
	u := url.URL{Path: v.path, RawQuery: v.query}
	q := u.Query()
	q.Set("lang", l)
	u.RawQuery = q.Encode()
	return u.String()
}

// zh holds the Chinese of every text of the pages; a test checks that
// none is missing.
var zh = map[string]string{
	"(at most":             "(最多",
	", first 64 KiB shown": ",只显示前 64 KiB",
	": those the group's members failed to consume after every retry.": ":该组成员重试全部用完仍未消费成功的消息。",
	"Address":            "地址",
	"Auto commit":        "自动提交",
	"Begin":              "开始",
	"Body":               "消息体",
	"Body (":             "消息体 (",
	"Born":               "产生",
	"Broadcast":          "广播",
	"Broker":             "Broker",
	"Broker id":          "Broker ID",
	"Broker offset":      "Broker 位点",
	"Brokers":            "Broker 列表",
	"Client":             "客户端",
	"Client id":          "客户端 ID",
	"Cluster":            "集群",
	"Consume":            "消费",
	"Consume TPS":        "消费 TPS",
	"Consumer groups":    "消费组",
	"Consumer offset":    "消费位点",
	"Consumption":        "消费情况",
	"Cost ms":            "耗时 ms",
	"Create / update":    "创建 / 更新",
	"Dashboard":          "驾驶舱",
	"Dead letters":       "死信",
	"Dead letters of":    "死信:",
	"Delete":             "删除",
	"Delete group":       "删除消费组",
	"Delete topic":       "删除主题",
	"Detail":             "详情",
	"Disk":               "磁盘",
	"End":                "结束",
	"Error":              "错误",
	"Export CSV":         "导出 CSV",
	"Export JSON":        "导出 JSON",
	"Expression":         "表达式",
	"Filter":             "筛选",
	"Find by id":         "按 ID 查询",
	"Find by key":        "按 Key 查询",
	"Find in time range": "按时间范围查询",
	"From min":           "从最小位点",
	"From topic":         "原主题",
	"Get TPS":            "消费 TPS",
	"Get today":          "今日消费",
	"Group":              "消费组",
	"Groups":             "消费组",
	"Id":                 "ID",
	"Kept in this console's memory for the last hour while the dashboard is open: a TPS point every 10 s, and each topic's message count (up to 500 topics) at each sample.": "驾驶舱打开期间,数据保存在本控制台内存中一小时:每 10 秒一个 TPS 点,每次采样记录各主题的消息数(最多 500 个主题)。",
	"Key":                          "Key",
	"Keys":                         "Keys",
	"Kind":                         "类型",
	"Lag":                          "堆积",
	"Language":                     "语言",
	"Last consumed":                "最后消费",
	"Last updated":                 "最后更新",
	"Max offset":                   "最大位点",
	"Members":                      "成员",
	"Message":                      "消息",
	"Message id":                   "消息 ID",
	"Message trace":                "消息轨迹",
	"Messages":                     "消息",
	"Messages of":                  "消息所在主题",
	"Messages stored":              "已存储消息",
	"Min offset":                   "最小位点",
	"Name":                         "名称",
	"Notify changes":               "通知变更",
	"Offset":                       "位点",
	"Offset id":                    "Offset ID",
	"Order":                        "顺序",
	"Perm":                         "权限",
	"Producers":                    "生产者",
	"Properties":                   "属性",
	"Put TPS":                      "生产 TPS",
	"Replication lag":              "复制延迟",
	"Put today":                    "今日生产",
	"Queue":                        "队列",
	"Queue offset":                 "队列位点",
	"Queues":                       "队列数",
	"Read queues":                  "读队列数",
	"Reconsumed":                   "重试次数",
	"Remark":                       "备注",
	"Resend":                       "重新发送",
	"Resend all":                   "全部重新发送",
	"Resend selected to the group": "将选中的消息重新发送给消费组",
	"Resend to one consumer":       "重新投递给一个消费者",
	"Reset":                        "重置",
	"Reset offset":                 "重置位点",
	"Result":                       "结果",
	"Retry":                        "重试",
	"Retry max times":              "最大重试次数",
	"Retry queues":                 "重试队列数",
	"Save settings":                "保存配置",
	"Send":                         "发送",
	"Send a message":               "发送消息",
	"Sent again as":                "重新发送后的 ID",
	"Settings":                     "配置",
	"Show":                         "显示",
	"Size":                         "大小",
	"Skip accumulated":             "跳过堆积",
	"Skip accumulated messages":    "跳过堆积消息",
	"Spent ms":                     "耗时 ms",
	"Status":                       "状态",
	"Step":                         "步骤",
	"Store host":                   "存储地址",
	"Stored":                       "存储",
	"Subscriptions":                "订阅",
	"Tag":                          "Tag",
	"Tags":                         "Tags",
	"This console was started without a producer, so it cannot send.": "本控制台启动时没有生产者,无法发送消息。",
	"Time":                          "时间",
	"Topic":                         "主题",
	"Topics":                        "主题",
	"Trace":                         "轨迹",
	"Trace by id":                   "按 ID 查询轨迹",
	"Trace by key":                  "按 Key 查询轨迹",
	"Trace topic":                   "轨迹主题",
	"Track type":                    "消费状态",
	"Update":                        "更新",
	"Value":                         "值",
	"Version":                       "版本",
	"When slow read from":           "消费慢时读取",
	"When slow read from broker id": "消费慢时读取的 Broker ID",
	"Write queues":                  "写队列数",
	"at":                            "于",
	"broadcast":                     "广播",
	"bytes":                         "字节",
	"consume enabled":               "允许消费",
	"dead letters (at most":         "条死信(最多",
	"empty: now":                    "留空:现在",
	"empty: the end of each queue":  "留空:每个队列的末尾",
	"force":                         "强制",
	"found":                         "条结果",
	"from":                          "来自",
	"from min":                      "从最小位点",
	"in the last":                   "最近",
	"local time; empty: the end of each queue":                               "本地时间;留空:每个队列的末尾",
	"messages traced from":                                                   "条消息的轨迹,来自",
	"moves the offsets of every topic of the group to the end of each queue": "将该组所有主题的位点移到每个队列的末尾",
	"next":                                  "下一页",
	"not on this broker":                    "此 Broker 上没有",
	"notify changes":                        "通知变更",
	"of":                                    "/",
	"of group":                              "消费组",
	"offset":                                "位点",
	"one name=value a line":                 "每行一个 name=value",
	"ordered":                               "顺序",
	"previous":                              "上一页",
	"records of":                            "条记录,轨迹主题",
	"space-separated":                       "以空格分隔",
	"to":                                    "到",
	"· Get TPS":                             "· 消费 TPS",
	"· consume TPS":                         "· 消费 TPS",
	"· keys":                                "· keys",
	"· ordered":                             "· 顺序",
	"· page":                                "· 第",
	"· tags":                                "· tags",
	"Send all %d dead letters of %s again?": "将 %[2]s 的全部 %[1]d 条死信重新发送?",
	"Skip the %d accumulated messages of group %s? Its offsets move to the end of every queue and those messages are never consumed.": "跳过消费组 %[2]s 堆积的 %[1]d 条消息?其位点将移到每个队列的末尾,这些消息不会再被消费。",
	"Delete group %s?": "删除消费组 %s?",
	"Delete topic %s?": "删除主题 %s?",
	"read+write":       "读写",
	"read":             "只读",
	"write":            "只写",
	"console":          "控制台",
	"Log out":          "退出登录",
	"All":              "全部",
	"Normal":           "普通",
	"Dead letter":      "死信",
	"System":           "系统",
	"System groups":    "系统消费组",
	"normal":           "普通",
	"retry":            "重试",
	"dlq":              "死信",
	"system":           "系统",
	"user":             "用户",

	"saved the group's settings": "已保存消费组配置",
	"skipped the accumulated messages: the offsets are at the end of each queue": "已跳过堆积消息:位点已在每个队列的末尾",
	"sent %s":                                "已发送 %s",
	"%d of %d dead letters sent again to %s": "%[1]d / %[2]d 条死信已重新发送到 %[3]s",
	"no live producer in group %s":           "消费组 %s 没有在线的生产者",
	"no live member":                         "没有在线成员",
	"Sign in":                                "登录",
	"User":                                   "用户名",
	"Password":                               "密码",
	"this console has no login":              "本控制台未开启登录",
	"too many wrong passwords: wait 30 seconds": "密码错误次数过多:请等待 30 秒",
	"wrong user or password":                    "用户名或密码错误",
}
