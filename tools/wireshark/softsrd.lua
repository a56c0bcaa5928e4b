-- SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
--
-- softsrd: a Wireshark dissector for softsrd's wire protocol, version 4
-- (docs/protocol.md): UD (opcodes 1, 2) and the SRD transport (16..22),
-- every field, the flags of each opcode, the ACK block a DATA packet may
-- carry, and the SACK bitmap as the PSNs it names.  Written from
-- docs/protocol.md, not from the C sources.
--
--   tshark -X lua_script:softsrd.lua -r capture.pcap
--   wireshark -X lua_script:softsrd.lua
--
-- It takes UDP port 4792 (rdma_srd's default udp_port; the preference
-- softsrd.udp_port changes it), and any other port with Decode As.
-- Display filters: softsrd, softsrd.opcode == 16, softsrd.psn, ...

local p = Proto("softsrd", "softsrd (SRD over UDP)")

local OPS = {
	[1] = "UD_SEND", [2] = "UD_SEND_WITH_IMM",
	[16] = "SRD_DATA", [17] = "SRD_ACK", [18] = "SRD_NAK",
	[19] = "SRD_HELLO", [20] = "SRD_WRITE", [21] = "SRD_READ_REQ",
	[22] = "SRD_READ_RESP",
}
-- The header length of each opcode (docs/protocol.md, "Headers").
local HDR = {
	[1] = 24, [2] = 24, [16] = 52, [17] = 40, [18] = 24, [19] = 20,
	[20] = 76, [21] = 76, [22] = 60,
}
local NAKS = {
	[1] = "RNR", [2] = "BAD_QPN", [3] = "BAD_QKEY", [4] = "BAD_LENGTH",
	[5] = "REMOTE_ABORT", [6] = "REMOTE_ACCESS",
}

local f = p.fields
f.version = ProtoField.uint8("softsrd.version", "Version")
f.opcode = ProtoField.uint8("softsrd.opcode", "Opcode", base.DEC, OPS)
f.flags = ProtoField.uint8("softsrd.flags", "Flags", base.HEX)
f.hdr_len = ProtoField.uint8("softsrd.hdr_len_words", "Header length (words)")
-- flag bits, by opcode
f.f_solicited = ProtoField.bool("softsrd.flags.solicited", "SOLICITED", 8, nil, 0x01)
f.f_has_imm = ProtoField.bool("softsrd.flags.has_imm", "HAS_IMM", 8, nil, 0x02)
f.f_retransmit = ProtoField.bool("softsrd.flags.retransmit", "RETRANSMIT", 8, nil, 0x04)
f.f_ack_now = ProtoField.bool("softsrd.flags.ack_now", "ACK_NOW", 8, nil, 0x08)
f.f_has_ack = ProtoField.bool("softsrd.flags.has_ack", "HAS_ACK", 8, nil, 0x10)
f.f_dup = ProtoField.bool("softsrd.flags.dup", "DUP", 8, nil, 0x01)
f.f_drain = ProtoField.bool("softsrd.flags.drain", "DRAIN", 8, nil, 0x02)
-- UD
f.ud_dst_qpn = ProtoField.uint32("softsrd.ud.dst_qpn", "Destination QPN")
f.ud_src_qpn = ProtoField.uint32("softsrd.ud.src_qpn", "Source QPN")
f.ud_qkey = ProtoField.uint32("softsrd.ud.qkey", "Q_Key", base.HEX)
f.ud_imm = ProtoField.uint32("softsrd.ud.imm_data", "Immediate data", base.HEX)
f.ud_reserved = ProtoField.uint32("softsrd.ud.reserved", "Reserved", base.HEX)
-- SRD, every opcode
f.src_tag = ProtoField.uint32("softsrd.src_tag", "Source tag", base.HEX)
f.dst_tag = ProtoField.uint32("softsrd.dst_tag", "Destination tag", base.HEX)
-- DATA and the RDMA opcodes
f.psn = ProtoField.uint32("softsrd.psn", "PSN")
f.msg_id = ProtoField.uint32("softsrd.msg_id", "Message id")
f.msg_base = ProtoField.uint32("softsrd.msg_base", "Message base")
f.dst_qpn = ProtoField.uint32("softsrd.dst_qpn", "Destination QPN")
f.src_qpn = ProtoField.uint32("softsrd.src_qpn", "Source QPN")
f.qkey = ProtoField.uint32("softsrd.qkey", "Q_Key", base.HEX)
f.imm = ProtoField.uint32("softsrd.imm_data", "Immediate data", base.HEX)
f.msg_len = ProtoField.uint32("softsrd.msg_len", "Message length")
f.offset = ProtoField.uint32("softsrd.offset", "Offset")
f.seg_bytes = ProtoField.uint16("softsrd.seg_bytes", "Segment bytes")
f.attempt = ProtoField.uint8("softsrd.attempt", "Attempt")
f.path = ProtoField.uint8("softsrd.path", "Path")
f.remote_addr = ProtoField.uint64("softsrd.remote_addr", "Remote address", base.HEX)
f.rkey = ProtoField.uint32("softsrd.rkey", "rkey", base.HEX)
f.rdma_len = ProtoField.uint32("softsrd.rdma_len", "RDMA length")
f.rdma_offset = ProtoField.uint32("softsrd.rdma_offset", "RDMA offset")
f.length = ProtoField.uint32("softsrd.length", "Chunk length")
f.req_msg_id = ProtoField.uint32("softsrd.req_msg_id", "Request message id")
f.req_attempt = ProtoField.uint8("softsrd.req_attempt", "Request attempt")
f.resp_reserved = ProtoField.bytes("softsrd.resp_reserved", "Reserved")
-- ACK
f.ack_psn = ProtoField.uint32("softsrd.ack_psn", "ACK PSN")
f.ack_delay = ProtoField.uint32("softsrd.ack_delay_us", "ACK delay (us)")
f.sack = ProtoField.bytes("softsrd.sack", "SACK bitmap")
f.sack_psn = ProtoField.uint32("softsrd.sack_psn", "SACKed PSN")
f.sack_count = ProtoField.uint32("softsrd.sack_count", "SACKed PSNs below ack_psn")
f.dup_psn = ProtoField.uint32("softsrd.dup_psn", "Duplicate PSN")
-- The ACK block of a DATA packet (flag HAS_ACK): the ACK fields above
f.ack_block = ProtoField.bytes("softsrd.ack_block", "ACK block")
f.ack_flags = ProtoField.uint8("softsrd.ack_flags", "ACK flags", base.HEX)
f.ack_reserved = ProtoField.bytes("softsrd.ack_reserved", "Reserved")
-- NAK (psn, msg_id, attempt as above)
f.nak_reason = ProtoField.uint8("softsrd.nak_reason", "Reason", base.DEC, NAKS)
f.nak_reserved = ProtoField.uint16("softsrd.nak_reserved", "Reserved", base.HEX)
-- HELLO
f.challenge = ProtoField.uint32("softsrd.challenge", "Challenge", base.HEX)
f.echo = ProtoField.uint32("softsrd.echo", "Echo", base.HEX)
f.payload = ProtoField.bytes("softsrd.payload", "Payload")
f.extra = ProtoField.bytes("softsrd.extension", "Header bytes beyond the known fields")

local e_short = ProtoExpert.new("softsrd.short", "Shorter than the opcode's header",
				expert.group.MALFORMED, expert.severity.ERROR)
local e_version = ProtoExpert.new("softsrd.version.bad", "Not version 4",
				  expert.group.PROTOCOL, expert.severity.WARN)
local e_opcode = ProtoExpert.new("softsrd.opcode.bad", "Unknown opcode",
				 expert.group.MALFORMED, expert.severity.ERROR)
p.experts = { e_short, e_version, e_opcode }

p.prefs.udp_port = Pref.uint("UDP port", 4792, "rdma_srd's udp_port")

local function data_fields(t, tvb, op)
	t:add(f.psn, tvb(12, 4))
	t:add(f.msg_id, tvb(16, 4))
	t:add(f.msg_base, tvb(20, 4))
	t:add(f.dst_qpn, tvb(24, 4))
	t:add(f.src_qpn, tvb(28, 4))
	t:add(f.qkey, tvb(32, 4))
	t:add(f.imm, tvb(36, 4))
	t:add(f.msg_len, tvb(40, 4))
	t:add(f.offset, tvb(44, 4))
	t:add(f.seg_bytes, tvb(48, 2))
	t:add(f.attempt, tvb(50, 1))
	t:add(f.path, tvb(51, 1))
	if op == 20 or op == 21 then
		t:add(f.remote_addr, tvb(52, 8))
		t:add(f.rkey, tvb(60, 4))
		t:add(f.rdma_len, tvb(64, 4))
		t:add(f.rdma_offset, tvb(68, 4))
		t:add(f.length, tvb(72, 4))
	elseif op == 22 then
		t:add(f.req_msg_id, tvb(52, 4))
		t:add(f.req_attempt, tvb(56, 1))
		t:add(f.resp_reserved, tvb(57, 3))
	end
end

-- ack_psn, ack_delay_us, sack and dup_psn, from offset b (an ACK's 12,
-- or 4 into an ACK block).
local function ack_fields(t, tvb, b)
	local ack = tvb(b, 4):uint()
	t:add(f.ack_psn, tvb(b, 4))
	t:add(f.ack_delay, tvb(b + 4, 4))
	local st = t:add(f.sack, tvb(b + 8, 16))
	local n = 0
	for i = 0, 127 do
		local byte = tvb(b + 8 + math.floor(i / 8), 1):uint()
		if bit.band(byte, bit.lshift(1, i % 8)) ~= 0 then
			st:add(f.sack_psn, tvb(b + 8 + math.floor(i / 8), 1),
			       (ack - 1 - i) % 4294967296)
			n = n + 1
		end
	end
	st:add(f.sack_count, tvb(b + 8, 16), n):set_generated()
	t:add(f.dup_psn, tvb(b + 24, 4))
end

function p.dissector(tvb, pinfo, tree)
	local len = tvb:len()
	if len < 4 then
		return 0
	end
	pinfo.cols.protocol = "softsrd"
	local t = tree:add(p, tvb(), "softsrd")
	local ver = tvb(0, 1):uint()
	local op = tvb(1, 1):uint()
	local hlen = tvb(3, 1):uint() * 4
	local vi = t:add(f.version, tvb(0, 1))
	if ver ~= 4 then
		vi:add_proto_expert_info(e_version)
	end
	local oi = t:add(f.opcode, tvb(1, 1))
	local fl = t:add(f.flags, tvb(2, 1))
	t:add(f.hdr_len, tvb(3, 1))
	local name = OPS[op]
	if not name then
		oi:add_proto_expert_info(e_opcode)
		pinfo.cols.info = string.format("softsrd opcode %d", op)
		return len
	end
	pinfo.cols.info = name
	-- The header bytes this dissector knows: the opcode's, and an ACK block.
	local known = HDR[op]
	if len < HDR[op] or hlen < HDR[op] or len < hlen then
		t:add_proto_expert_info(e_short)
		return len
	end

	if op == 1 or op == 2 then
		fl:add(f.f_solicited, tvb(2, 1))
		t:add(f.ud_dst_qpn, tvb(4, 4))
		t:add(f.ud_src_qpn, tvb(8, 4))
		t:add(f.ud_qkey, tvb(12, 4))
		t:add(f.ud_imm, tvb(16, 4))
		t:add(f.ud_reserved, tvb(20, 4))
		pinfo.cols.info = string.format("%s QP %d -> %d, %d bytes", name,
						tvb(8, 4):uint(), tvb(4, 4):uint(),
						len - hlen)
	else
		t:add(f.src_tag, tvb(4, 4))
		t:add(f.dst_tag, tvb(8, 4))
		if op == 17 then
			fl:add(f.f_dup, tvb(2, 1))
			fl:add(f.f_drain, tvb(2, 1))
			ack_fields(t, tvb, 12)
			pinfo.cols.info = string.format("%s ack_psn %u", name,
							tvb(12, 4):uint())
		elseif op == 18 then
			t:add(f.psn, tvb(12, 4))
			t:add(f.msg_id, tvb(16, 4))
			t:add(f.attempt, tvb(20, 1))
			t:add(f.nak_reason, tvb(21, 1))
			t:add(f.nak_reserved, tvb(22, 2))
			pinfo.cols.info = string.format("%s %s psn %u msg %u", name,
							NAKS[tvb(21, 1):uint()] or "?",
							tvb(12, 4):uint(), tvb(16, 4):uint())
		elseif op == 19 then
			t:add(f.challenge, tvb(12, 4))
			t:add(f.echo, tvb(16, 4))
			pinfo.cols.info = string.format("%s src_tag 0x%08x dst_tag 0x%08x"
							.. " challenge 0x%08x echo 0x%08x",
							name, tvb(4, 4):uint(), tvb(8, 4):uint(),
							tvb(12, 4):uint(), tvb(16, 4):uint())
		else
			fl:add(f.f_solicited, tvb(2, 1))
			fl:add(f.f_has_imm, tvb(2, 1))
			fl:add(f.f_retransmit, tvb(2, 1))
			fl:add(f.f_ack_now, tvb(2, 1))
			fl:add(f.f_has_ack, tvb(2, 1))
			data_fields(t, tvb, op)
			local info = string.format("%s psn %u msg %u off %u/%u%s",
						   name, tvb(12, 4):uint(),
						   tvb(16, 4):uint(), tvb(44, 4):uint(),
						   tvb(40, 4):uint(),
						   bit.band(tvb(2, 1):uint(), 4) ~= 0 and
						   " [retransmit]" or "")
			pinfo.cols.info = info
			if bit.band(tvb(2, 1):uint(), 0x10) ~= 0 then
				local b = HDR[op]
				if hlen < b + 32 then
					t:add_proto_expert_info(e_short)
					return len
				end
				local at = t:add(f.ack_block, tvb(b, 32))
				local af = at:add(f.ack_flags, tvb(b, 1))
				af:add(f.f_dup, tvb(b, 1))
				af:add(f.f_drain, tvb(b, 1))
				at:add(f.ack_reserved, tvb(b + 1, 3))
				ack_fields(at, tvb, b + 4)
				known = b + 32
				pinfo.cols.info = string.format("%s, ack_psn %u", info,
								tvb(b + 4, 4):uint())
			end
		end
	end
	if hlen > known then
		t:add(f.extra, tvb(known, hlen - known))
	end
	if len > hlen then
		t:add(f.payload, tvb(hlen, len - hlen))
	end
	return len
end

local udp = DissectorTable.get("udp.port")
local registered = p.prefs.udp_port
udp:add(registered, p)

function p.prefs_changed()
	if registered ~= p.prefs.udp_port then
		udp:remove(registered, p)
		registered = p.prefs.udp_port
		udp:add(registered, p)
	end
end
