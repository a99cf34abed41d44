/*
Benchmark of Volcano's allocate action on the fixed "volcanic topology" shape,
kept by the volcanic project (tools/volcano-topology-bench) so that Volcano's
own timing can be put beside volcanic's in docs/benchmark.md.

Drop this file into a Volcano v1.15.1 checkout at
pkg/scheduler/actions/allocate/ and run

	go test -run '^$' -bench BenchmarkVolcanicTopology -benchtime 1x -count 3 \
	    ./pkg/scheduler/actions/allocate/

It runs Volcano's real code: the mock SchedulerCache (cache.NewCustomMockSchedulerCache,
fed exactly as uthelper.TestCommonStruct.createSchedulerCache feeds it),
framework.OpenSession with the plugin tiers parsed from a YAML scheduler conf the way
the real scheduler parses it (yaml.Unmarshal + plugins.ApplyPluginConfDefaults), and one
Execute of the allocate action. ns/op is the wall time of that single Execute only.

Shape (N = 1,000 for "1k", 10,000 for "10k"):
  - nodes n-<i>, i = 0..N-1, allocatable cpu 32, memory 256Gi, pods 110
  - tier-1 HyperNodes leaf-<j> of 20 consecutive nodes (exactMatch on node names)
  - tier-2 HyperNodes spine-<k> of 10 consecutive leaves (exactMatch on leaf names)
  - queue q1 (weight 1, no capability), namespace c1
  - J = N*36/1000 PodGroups pg-<m>, size S = [8,16,32,64,128,256][m%6], minMember S,
    Inqueue, queue q1, networkTopology {mode: hard, highestTierAllowed: 1 if S<=64 else 2},
    no minResources
  - pods pg-<m>-p<t>, Pending, requests cpu 8 / memory 32Gi, group pg-<m>,
    label volcano.sh/task-spec: worker; all with the builders' default (zero)
    creation timestamp
*/

package allocate

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/record"

	schedulingv1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
	topologyv1alpha1 "volcano.sh/apis/pkg/apis/topology/v1alpha1"

	"volcano.sh/volcano/pkg/scheduler/api"
	"volcano.sh/volcano/pkg/scheduler/cache"
	"volcano.sh/volcano/pkg/scheduler/conf"
	"volcano.sh/volcano/pkg/scheduler/framework"
	"volcano.sh/volcano/pkg/scheduler/plugins"
	"volcano.sh/volcano/pkg/scheduler/plugins/binpack"
	"volcano.sh/volcano/pkg/scheduler/plugins/drf"
	"volcano.sh/volcano/pkg/scheduler/plugins/gang"
	networktopologyaware "volcano.sh/volcano/pkg/scheduler/plugins/network-topology-aware"
	"volcano.sh/volcano/pkg/scheduler/plugins/nodeorder"
	"volcano.sh/volcano/pkg/scheduler/plugins/predicates"
	"volcano.sh/volcano/pkg/scheduler/plugins/priority"
	"volcano.sh/volcano/pkg/scheduler/plugins/proportion"
	"volcano.sh/volcano/pkg/scheduler/util"
)

const volcanicSchedulerConf = `
actions: "allocate"
tiers:
- plugins:
  - name: gang
  - name: priority
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
`

const (
	volcanicNodesPerLeaf   = 20
	volcanicLeavesPerSpine = 10
)

var volcanicJobSizes = []int{8, 16, 32, 64, 128, 256}

// volcanicTiers parses the conf exactly like scheduler.UnmarshalSchedulerConf does
// (that package cannot be imported from here: it imports this one).
func volcanicTiers(b *testing.B) ([]conf.Tier, []conf.Configuration) {
	sc := &conf.SchedulerConfiguration{}
	if err := yaml.Unmarshal([]byte(volcanicSchedulerConf), sc); err != nil {
		b.Fatal(err)
	}
	if strings.TrimSpace(sc.Actions) != "allocate" {
		b.Fatalf("unexpected actions %q", sc.Actions)
	}
	for i := range sc.Tiers {
		for j := range sc.Tiers[i].Plugins {
			plugins.ApplyPluginConfDefaults(&sc.Tiers[i].Plugins[j])
		}
	}
	return sc.Tiers, sc.Configurations
}

var volcanicPluginBuilders = map[string]framework.PluginBuilder{
	gang.PluginName:                 gang.New,
	priority.PluginName:             priority.New,
	drf.PluginName:                  drf.New,
	predicates.PluginName:           predicates.New,
	proportion.PluginName:           proportion.New,
	nodeorder.PluginName:            nodeorder.New,
	binpack.PluginName:              binpack.New,
	networktopologyaware.PluginName: networktopologyaware.New,
}

type volcanicShape struct {
	nodes               []*v1.Node
	pods                []*v1.Pod
	podGroups           []*schedulingv1.PodGroup
	queues              []*schedulingv1.Queue
	hyperNodesMap       map[string]*api.HyperNodeInfo
	hyperNodesSetByTier map[int]sets.Set[string]
	hyperNodes          map[string]sets.Set[string] // hyperNode -> real node names
	jobSize             []int
}

func buildVolcanicShape(n int) *volcanicShape {
	s := &volcanicShape{
		hyperNodesMap:       map[string]*api.HyperNodeInfo{},
		hyperNodesSetByTier: map[int]sets.Set[string]{1: sets.New[string](), 2: sets.New[string]()},
		hyperNodes:          map[string]sets.Set[string]{},
	}
	for i := 0; i < n; i++ {
		s.nodes = append(s.nodes, util.BuildNode(fmt.Sprintf("n-%d", i),
			api.BuildResourceList("32", "256Gi", []api.ScalarResource{{Name: "pods", Value: "110"}}...), nil))
	}
	numLeaves := n / volcanicNodesPerLeaf
	for j := 0; j < numLeaves; j++ {
		name := fmt.Sprintf("leaf-%d", j)
		members := make([]api.MemberConfig, 0, volcanicNodesPerLeaf)
		real := sets.New[string]()
		for i := j * volcanicNodesPerLeaf; i < (j+1)*volcanicNodesPerLeaf; i++ {
			node := fmt.Sprintf("n-%d", i)
			members = append(members, api.MemberConfig{Name: node, Type: topologyv1alpha1.MemberTypeNode, Selector: "exact"})
			real.Insert(node)
		}
		s.hyperNodesMap[name] = api.NewHyperNodeInfo(api.BuildHyperNode(name, 1, members))
		s.hyperNodesSetByTier[1].Insert(name)
		s.hyperNodes[name] = real
	}
	numSpines := numLeaves / volcanicLeavesPerSpine
	for k := 0; k < numSpines; k++ {
		name := fmt.Sprintf("spine-%d", k)
		members := make([]api.MemberConfig, 0, volcanicLeavesPerSpine)
		real := sets.New[string]()
		for j := k * volcanicLeavesPerSpine; j < (k+1)*volcanicLeavesPerSpine; j++ {
			leaf := fmt.Sprintf("leaf-%d", j)
			members = append(members, api.MemberConfig{Name: leaf, Type: topologyv1alpha1.MemberTypeHyperNode, Selector: "exact"})
			real = real.Union(s.hyperNodes[leaf])
		}
		s.hyperNodesMap[name] = api.NewHyperNodeInfo(api.BuildHyperNode(name, 2, members))
		s.hyperNodesSetByTier[2].Insert(name)
		s.hyperNodes[name] = real
	}

	s.queues = []*schedulingv1.Queue{util.BuildQueue("q1", 1, nil)}
	numJobs := n * 36 / 1000
	for m := 0; m < numJobs; m++ {
		size := volcanicJobSizes[m%len(volcanicJobSizes)]
		tier := 1
		if size > 64 {
			tier = 2
		}
		pgName := fmt.Sprintf("pg-%d", m)
		// hyperNodeName "" -> annotation volcano.sh/allocated-hyper-node: "" (empty, as in Volcano's own tests)
		s.podGroups = append(s.podGroups, util.BuildPodGroupWithNetWorkTopologies(pgName, "c1", "", "q1",
			int32(size), nil, schedulingv1.PodGroupInqueue, "hard", tier))
		s.jobSize = append(s.jobSize, size)
		for t := 0; t < size; t++ {
			s.pods = append(s.pods, util.BuildPod("c1", fmt.Sprintf("%s-p%d", pgName, t), "", v1.PodPending,
				api.BuildResourceList("8", "32Gi"), pgName, map[string]string{"volcano.sh/task-spec": "worker"}, nil))
		}
	}
	return s
}

// newVolcanicCache mirrors uthelper.TestCommonStruct.createSchedulerCache, except that the
// FakeBinder is buffered (the helper's unbuffered one blocks every bind until a test drains it,
// so binds could not be counted) and the event recorder drops events instead of blocking at 100.
func newVolcanicCache(s *volcanicShape) (*cache.SchedulerCache, *util.FakeBinder, chan struct{}) {
	binder := util.NewFakeBinder(len(s.pods) + 16)
	evictor := util.NewFakeEvictor(16)
	sc := cache.NewCustomMockSchedulerCache("utmock-scheduler", binder, evictor, &util.FakeStatusUpdater{}, nil, &record.FakeRecorder{})
	stop := make(chan struct{})
	sc.Run(stop)
	sc.WaitForCacheSync(stop)
	for _, node := range s.nodes {
		sc.AddOrUpdateNode(node)
	}
	for _, pod := range s.pods {
		sc.AddPod(pod)
	}
	for _, pg := range s.podGroups {
		sc.AddPodGroupV1beta1(pg)
	}
	for _, q := range s.queues {
		sc.AddQueueV1beta1(q)
	}
	ready := new(atomic.Bool)
	ready.Store(true)
	for _, hni := range s.hyperNodesMap {
		for _, member := range hni.HyperNode.Spec.Members {
			if member.Type != topologyv1alpha1.MemberTypeHyperNode || member.Selector.ExactMatch == nil {
				continue
			}
			child := member.Selector.ExactMatch.Name
			hni.Children.Insert(child)
			if childInfo, found := s.hyperNodesMap[child]; found {
				childInfo.Parent = hni.Name
			}
		}
	}
	sc.HyperNodesInfo = api.NewHyperNodesInfoWithCache(s.hyperNodesMap, s.hyperNodesSetByTier, s.hyperNodes, ready)
	return sc, binder, stop
}

type volcanicResult struct {
	openDur, allocDur time.Duration
	allocCPU          time.Duration // process user+sys CPU time during Execute (all goroutines, GC included)
	jobs, pods        int           // size of the shape
	committed         int           // tasks in Binding status in the session after Execute
	binds             int           // binds received by the FakeBinder
	jobsFull          int           // jobs with all S pods bound
	jobsPartial       int           // jobs with some but not all pods bound
	podsPlaced        int
	violations        int // placed jobs spanning >1 leaf (S<=64) or >1 spine (S>=128)
	spanDetail        string
}

func runVolcanicOnce(b *testing.B, n int, tiers []conf.Tier, cfgs []conf.Configuration) volcanicResult {
	var r volcanicResult
	b.StopTimer()
	s := buildVolcanicShape(n)
	r.jobs, r.pods = len(s.podGroups), len(s.pods)
	sc, binder, stop := newVolcanicCache(s)

	for name, pb := range volcanicPluginBuilders {
		framework.RegisterPluginBuilder(name, pb)
	}
	conf.EnabledActionMap = map[string]bool{"allocate": true}

	t0 := time.Now()
	ssn := framework.OpenSession(sc, tiers, cfgs)
	r.openDur = time.Since(t0)
	if !ssn.HyperNodesReadyToSchedule {
		b.Fatalf("session says hyperNodes are not ready to schedule")
	}

	action := New()
	action.Initialize()
	// progress line every minute on stderr (binds so far), so a long run can be judged
	totalPods := r.pods
	progressDone := make(chan struct{})
	go func() {
		tick := time.NewTicker(time.Minute)
		defer tick.Stop()
		start := time.Now()
		for {
			select {
			case <-progressDone:
				return
			case <-tick.C:
				fmt.Fprintf(os.Stderr, "volcanic-bench %s: allocate running %v, binds so far %d/%d\n",
					volcanicSizeName(n), time.Since(start).Round(time.Second), binder.Length(), totalPods)
			}
		}
	}()
	cpu0 := volcanicProcessCPU()
	b.StartTimer()
	t1 := time.Now()
	action.Execute(ssn)
	r.allocDur = time.Since(t1)
	b.StopTimer()
	r.allocCPU = volcanicProcessCPU() - cpu0
	close(progressDone)
	action.UnInitialize()

	for _, job := range ssn.Jobs {
		r.committed += len(job.TaskStatusIndex[api.Binding])
	}
	// binds are asynchronous (cache.processBindTask every 20ms); wait for them to arrive.
	deadline := time.Now().Add(120 * time.Second)
	for binder.Length() < r.committed && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond) // any stray extra bind
	binds := binder.Binds()
	r.binds = len(binds)

	// placement check
	leafOf := func(node string) int {
		i, _ := strconv.Atoi(strings.TrimPrefix(node, "n-"))
		return i / volcanicNodesPerLeaf
	}
	perJob := map[int][]string{}
	for key, node := range binds { // key "c1/pg-<m>-p<t>"
		name := strings.TrimPrefix(key, "c1/pg-")
		m, _ := strconv.Atoi(name[:strings.Index(name, "-p")])
		perJob[m] = append(perJob[m], node)
	}
	spanCount := map[string]int{}
	for m, nodes := range perJob {
		size := s.jobSize[m]
		r.podsPlaced += len(nodes)
		if len(nodes) == size {
			r.jobsFull++
		} else {
			r.jobsPartial++
		}
		leaves, spines := sets.New[int](), sets.New[int]()
		for _, nd := range nodes {
			l := leafOf(nd)
			leaves.Insert(l)
			spines.Insert(l / volcanicLeavesPerSpine)
		}
		if (size <= 64 && leaves.Len() != 1) || (size > 64 && spines.Len() != 1) {
			r.violations++
		}
		spanCount[fmt.Sprintf("S=%d:%dleaf/%dspine", size, leaves.Len(), spines.Len())]++
	}
	keys := make([]string, 0, len(spanCount))
	for k := range spanCount {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s x%d", k, spanCount[k]))
	}
	r.spanDetail = strings.Join(parts, ", ")

	framework.CloseSession(ssn)
	framework.CleanupPluginBuilders()
	close(stop)
	return r
}

func volcanicProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func volcanicSizeName(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

func BenchmarkVolcanicTopology(b *testing.B) {
	tiers, cfgs := volcanicTiers(b)
	for _, size := range []struct {
		name string
		n    int
	}{{"1k", 1000}, {"10k", 10000}} {
		b.Run(size.name, func(b *testing.B) {
			var last volcanicResult
			var openTotal, cpuTotal time.Duration
			for i := 0; i < b.N; i++ {
				last = runVolcanicOnce(b, size.n, tiers, cfgs)
				openTotal += last.openDur
				cpuTotal += last.allocCPU
				b.Logf("%s: allocate %v (process cpu %v), open-session %v, jobs %d, pods %d, committed %d, binds %d, jobs full %d, partial %d, pods placed %d, topology violations %d; spans: %s",
					size.name, last.allocDur, last.allocCPU, last.openDur, last.jobs, last.pods, last.committed, last.binds,
					last.jobsFull, last.jobsPartial, last.podsPlaced, last.violations, last.spanDetail)
			}
			b.ReportMetric(float64(openTotal.Nanoseconds())/float64(b.N), "open-ns/op")
			b.ReportMetric(float64(cpuTotal.Nanoseconds())/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(last.binds), "binds")
			b.ReportMetric(float64(last.jobsFull), "jobs-placed")
			b.ReportMetric(float64(last.violations), "violations")
		})
	}
}
