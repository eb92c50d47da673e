// node-dns is the cluster DNS of the local node (bin/node): a small DNS server on the host that
// answers the names Kubernetes gives Services and forwards every other name to the host's resolver.
//
// It stands in for CoreDNS, which has no image here. It watches Services and EndpointSlices
// through the API and answers A queries for
//
//	<service>.<namespace>.svc.<domain>             the ClusterIP, or for a headless Service the
//	                                               addresses of its endpoints (ready ones, or all
//	                                               with publishNotReadyAddresses)
//	<hostname>.<service>.<namespace>.svc.<domain>  one endpoint of a headless Service (the stable
//	                                               per-pod name of a StatefulSet)
//
// Other names under <domain> get NXDOMAIN, and AAAA queries for them an empty answer; names
// outside <domain> are relayed as they are to the upstream resolver. UDP only: the answers fit.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"log"
	"net"
	"os"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	discoverylisters "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/clientcmd"
)

const (
	typeA    = 1
	typeAAAA = 28
	rcodeOK  = 0
	rcodeNX  = 3
	rcodeErr = 2
	ttl      = 5
)

type server struct {
	domain    string // "cluster.local."
	upstream  string // host:port
	services  corelisters.ServiceLister
	endpoints discoverylisters.EndpointSliceLister
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of an identity that may list and watch Services and EndpointSlices")
	listen := flag.String("listen", "169.254.20.10:53", "UDP address to answer on")
	domain := flag.String("domain", "cluster.local", "the cluster domain")
	upstream := flag.String("upstream", "", "resolver for names outside the cluster domain (default: the first nameserver of /etc/resolv.conf)")
	flag.Parse()

	up := *upstream
	if up == "" {
		up = firstNameserver("/etc/resolv.conf")
	}
	if up != "" && !strings.Contains(up, ":") {
		up = net.JoinHostPort(up, "53")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		log.Fatalf("kubeconfig: %v", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		log.Fatalf("client: %v", err)
	}
	factory := informers.NewSharedInformerFactory(client, 10*time.Minute)
	s := &server{
		domain:    strings.TrimSuffix(*domain, ".") + ".",
		upstream:  up,
		services:  factory.Core().V1().Services().Lister(),
		endpoints: factory.Discovery().V1().EndpointSlices().Lister(),
	}
	stop := make(chan struct{})
	factory.Start(stop)
	for typ, ok := range factory.WaitForCacheSync(stop) {
		if !ok {
			log.Fatalf("no cache of %v", typ)
		}
	}
	conn, err := net.ListenPacket("udp", *listen)
	if err != nil {
		log.Fatalf("listen %s: %v", *listen, err)
	}
	log.Printf("answering %s on %s, other names through %s", s.domain, *listen, up)
	buf := make([]byte, 4096)
	for {
		n, addr, err := conn.ReadFrom(buf)
		if err != nil {
			log.Fatalf("read: %v", err)
		}
		query := append([]byte(nil), buf[:n]...)
		go s.serve(conn, addr, query)
	}
}

func (s *server) serve(conn net.PacketConn, addr net.Addr, query []byte) {
	name, qtype, qend, err := parseQuestion(query)
	if err != nil {
		return // not a query we can answer: drop it, as a resolver retries or gives up
	}
	lname := strings.ToLower(name)
	if lname != s.domain && !strings.HasSuffix(lname, "."+s.domain) {
		if reply, err := s.forward(query); err == nil {
			_, _ = conn.WriteTo(reply, addr)
		} else {
			_, _ = conn.WriteTo(answer(query, qend, rcodeErr, false, nil), addr)
		}
		return
	}
	ips, found, err := s.lookup(strings.TrimSuffix(lname, "."+s.domain))
	switch {
	case err != nil:
		log.Printf("%s: %v", name, err)
		_, _ = conn.WriteTo(answer(query, qend, rcodeErr, true, nil), addr)
	case !found:
		_, _ = conn.WriteTo(answer(query, qend, rcodeNX, true, nil), addr)
	case qtype == typeA:
		_, _ = conn.WriteTo(answer(query, qend, rcodeOK, true, ips), addr)
	default: // the name exists, but only with IPv4 addresses
		_, _ = conn.WriteTo(answer(query, qend, rcodeOK, true, nil), addr)
	}
}

// lookup resolves a name relative to the cluster domain: "svc.ns.svc" or "host.svc.ns.svc".
func (s *server) lookup(rel string) ([]net.IP, bool, error) {
	parts := strings.Split(rel, ".")
	if len(parts) < 3 || len(parts) > 4 || parts[len(parts)-1] != "svc" {
		return nil, false, nil
	}
	ns, name := parts[len(parts)-2], parts[len(parts)-3]
	svc, err := s.services.Services(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil, false, nil
	} else if err != nil {
		return nil, false, err
	}
	headless := svc.Spec.ClusterIP == corev1.ClusterIPNone || svc.Spec.ClusterIP == ""
	if len(parts) == 3 && !headless {
		return []net.IP{net.ParseIP(svc.Spec.ClusterIP).To4()}, true, nil
	}
	if len(parts) == 4 && !headless {
		return nil, false, nil
	}
	slices, err := s.endpoints.EndpointSlices(ns).List(labels.SelectorFromSet(labels.Set{discoveryv1.LabelServiceName: name}))
	if err != nil {
		return nil, false, err
	}
	var ips []net.IP
	for _, slice := range slices {
		if slice.AddressType != discoveryv1.AddressTypeIPv4 {
			continue
		}
		for _, ep := range slice.Endpoints {
			ready := ep.Conditions.Ready == nil || *ep.Conditions.Ready
			if !ready && !svc.Spec.PublishNotReadyAddresses {
				continue
			}
			if len(parts) == 4 && (ep.Hostname == nil || *ep.Hostname != parts[0]) {
				continue
			}
			for _, a := range ep.Addresses {
				if ip := net.ParseIP(a).To4(); ip != nil {
					ips = append(ips, ip)
				}
			}
		}
	}
	// A headless Service without endpoints exists, with no address; a per-pod name does not.
	return ips, len(parts) == 3 || len(ips) > 0, nil
}

func (s *server) forward(query []byte) ([]byte, error) {
	if s.upstream == "" {
		return nil, errors.New("no upstream resolver")
	}
	c, err := net.Dial("udp", s.upstream)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(4 * time.Second))
	if _, err := c.Write(query); err != nil {
		return nil, err
	}
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// parseQuestion reads the first question of a query: its name (dotted, with the final dot), its
// type, and where the question ends.
func parseQuestion(msg []byte) (string, uint16, int, error) {
	if len(msg) < 12 || msg[2]&0x80 != 0 || binary.BigEndian.Uint16(msg[4:6]) < 1 {
		return "", 0, 0, errors.New("not a query")
	}
	var b strings.Builder
	i := 12
	for {
		if i >= len(msg) {
			return "", 0, 0, errors.New("short name")
		}
		l := int(msg[i])
		i++
		if l == 0 {
			break
		}
		if l&0xC0 != 0 || i+l > len(msg) {
			return "", 0, 0, errors.New("bad label")
		}
		b.Write(msg[i : i+l])
		b.WriteByte('.')
		i += l
	}
	if i+4 > len(msg) {
		return "", 0, 0, errors.New("short question")
	}
	name := b.String()
	if name == "" {
		name = "."
	}
	return name, binary.BigEndian.Uint16(msg[i : i+2]), i + 4, nil
}

// answer builds the response to query: its first question echoed, and one A record per address.
func answer(query []byte, qend int, rcode int, authoritative bool, ips []net.IP) []byte {
	out := make([]byte, 0, qend+16*len(ips))
	out = append(out, query[0], query[1])
	flags := uint16(0x8000) | binary.BigEndian.Uint16(query[2:4])&0x7900 | 0x0080 | uint16(rcode)
	if authoritative {
		flags |= 0x0400
	}
	out = binary.BigEndian.AppendUint16(out, flags)
	out = binary.BigEndian.AppendUint16(out, 1)
	out = binary.BigEndian.AppendUint16(out, uint16(len(ips)))
	out = append(out, 0, 0, 0, 0)
	out = append(out, query[12:qend]...)
	for _, ip := range ips {
		out = append(out, 0xC0, 0x0C) // the name: a pointer to the question's
		out = binary.BigEndian.AppendUint16(out, typeA)
		out = binary.BigEndian.AppendUint16(out, 1) // class IN
		out = binary.BigEndian.AppendUint32(out, ttl)
		out = binary.BigEndian.AppendUint16(out, 4)
		out = append(out, ip...)
	}
	return out
}

func firstNameserver(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "nameserver" {
			return f[1]
		}
	}
	return ""
}
